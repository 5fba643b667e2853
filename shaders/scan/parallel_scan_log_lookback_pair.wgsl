// prelude: recurrence/launch.wgsl
// prelude: scan/log_bindings.wgsl
// prelude: recurrence/width_pair.wgsl
// prelude: recurrence/lookback.wgsl
// prelude: scan/parallel_scan_log_lookback.wgsl
// The one-pass log scan (scan/parallel_scan_log_lookback.wgsl), two adjacent channels an
// invocation (D % 2 == 0): the path of half storage whose D does not divide into fours, each
// step's pair of halves one whole packed word that only this invocation writes.
// dtype: lc pair
// dtype: lv pair
// dtype: g pair
// dtype: h pair
// dtype: out pair store
// dtype: out2 pair store
