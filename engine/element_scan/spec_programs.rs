//! The element-scan spec's three example programs, exactly as the spec writes them: the one
//! copy that the examples, the tests, the CUDA parity cases and the docs use.
//!
//! Each names its inputs; bind them with [`Bindings`](super::Bindings) (`batch`, `time` and
//! `heads` as numbers where the text uses them).

/// A tanh recurrence `h = tanh(x + a h)`: x (batch, time, width), decay broadcastable to x
/// (e.g. (width) or (time, width)), initial (batch, width) -> (batch, time, width).
pub const TANH_SCAN: &str = "(element-scan (lambda (h x a) (tanh (+ x (* a h))))
              initial
              (list x (broadcast-to decay (shape x)))
              :axis 1)";

/// A norm-capped vector state of 16: x (batch, time, heads, 16), decay broadcastable to
/// (batch, time, heads, 1), numbers batch, time, heads -> (batch, time, heads, 16).
pub const NORM_CAPPED_SCAN: &str = "(element-scan (lambda (h x a)
                (let ((y (+ (* a h) x)))
                  (/ y (maximum 1.0 (sqrt (sum (* y y) :axes [-1]))))))
              (zeros [batch heads 16])
              (list x (broadcast-to decay [batch time heads 1]))
              :axis 1
              :state-axis -1)";

/// A right-to-left max-plus sweep `h = max(h - c, x)`: x, cost (batch, time, width), initial
/// (batch, width) -> (batch, time, width).
pub const MAX_PLUS_REVERSE_SCAN: &str = "(element-scan (lambda (h x c) (maximum (- h c) x))
              initial
              (list x cost)
              :axis 1
              :reverse true)";
