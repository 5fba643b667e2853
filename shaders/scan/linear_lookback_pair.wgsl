// prelude: recurrence/launch.wgsl
// prelude: scan/linear_bindings.wgsl
// prelude: recurrence/width_pair.wgsl
// prelude: recurrence/lookback.wgsl
// prelude: scan/linear_lookback.wgsl
// The one-pass linear scan (scan/linear_lookback.wgsl), two adjacent channels an invocation
// (N % 2 == 0): the path of half storage whose N does not divide into fours, each step's
// pair of halves one whole packed word that only this invocation writes.
// dtype: a pair
// dtype: x pair
// dtype: h0 pair
// dtype: h pair
// dtype: out pair store
// dtype: da pair store
// dtype: dh0 pair store
