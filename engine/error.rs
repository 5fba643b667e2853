//! The one error type of the engine.
//!
//! Every fallible public function returns [`Result`]. Variants name the op and the argument
//! involved, and carry expected vs. actual values, so a caller's mistake reads as a sentence.

use std::fmt;

/// A shape, printed as `[2, 3, 4]`.
#[derive(Clone, PartialEq, Eq)]
pub struct Dims(pub Vec<usize>);

impl fmt::Debug for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl fmt::Display for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl From<&[usize]> for Dims {
    fn from(s: &[usize]) -> Self {
        Dims(s.to_vec())
    }
}

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An argument has the wrong shape (rank, a dimension, or disagreement with another).
    #[error("{op}: argument `{arg}` has shape {actual}, expected {expected}")]
    Shape {
        /// The op that failed.
        op: &'static str,
        /// The argument at fault.
        arg: &'static str,
        /// What the op accepts.
        expected: String,
        /// The shape it was given.
        actual: Dims,
    },

    /// Two arguments whose shapes must agree do not.
    #[error("{op}: shapes do not agree: {lhs_name} {lhs} vs {rhs_name} {rhs}")]
    ShapeMismatch {
        /// The op that failed.
        op: &'static str,
        /// The first argument's name.
        lhs_name: &'static str,
        /// Its shape.
        lhs: Dims,
        /// The second argument's name.
        rhs_name: &'static str,
        /// Its shape.
        rhs: Dims,
    },

    /// An argument's element type is one the op does not take. Half-precision tensors reach
    /// only the ops that read them (matmul, linear, embedding, layer_norm, the GPT-2 decode
    /// kernels, conversions); every other op refuses them instead of misreading the words.
    #[error("{op}: argument `{arg}` has dtype {actual}, expected {expected}")]
    DType {
        /// The op that failed.
        op: &'static str,
        /// The argument at fault.
        arg: &'static str,
        /// What the op takes, e.g. `F32` or `F32, F16 or BF16`.
        expected: String,
        /// The dtype it was given.
        actual: String,
    },

    /// A scalar argument (a size, a flag, a length) has a value the op does not accept.
    #[error("{op}: argument `{arg}` is {actual}, expected {expected}")]
    Value {
        /// The op that failed.
        op: &'static str,
        /// The argument at fault.
        arg: &'static str,
        /// What the op accepts.
        expected: String,
        /// The value it was given.
        actual: String,
    },

    /// The input is valid but outside what the GPU kernel supports (the scan envelope, a
    /// missing adapter feature). The dispatch seam falls back to the CPU reference on this.
    #[error("{op}: outside the GPU kernel's envelope: {reason}")]
    Fallback {
        /// The op.
        op: &'static str,
        /// Why the kernel cannot run it.
        reason: String,
    },

    /// A buffer would exceed the device's storage binding limit.
    #[error("{op}: argument `{arg}` needs {bytes} bytes, over the device's storage binding limit of {limit} bytes")]
    TooLarge {
        /// The op that failed.
        op: &'static str,
        /// The argument at fault.
        arg: &'static str,
        /// Bytes it needs.
        bytes: u64,
        /// The device's storage binding limit in bytes.
        limit: u64,
    },

    /// Tensors from different contexts (devices) were mixed in one op.
    #[error("{op}: argument `{arg}` lives on a different context ({actual}) than the op ({expected})")]
    WrongContext {
        /// The op that failed.
        op: &'static str,
        /// The argument at fault.
        arg: &'static str,
        /// The op's context.
        expected: String,
        /// The argument's context.
        actual: String,
    },

    /// A WGSL kernel failed to parse, validate or build a pipeline.
    #[error("kernel `{kernel}` failed to compile: {message}\n--- WGSL ---\n{wgsl}")]
    Shader {
        /// The kernel's name (its cache key).
        kernel: String,
        /// The compiler's or the driver's message.
        message: String,
        /// The WGSL source.
        wgsl: String,
    },

    /// No adapter matched the request (`ENGINE_BACKEND`, `WGPU_ADAPTER_NAME`).
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),

    /// The adapter refused to create a device.
    #[error("could not create a device on `{adapter}`: {message}")]
    RequestDevice {
        /// The adapter's name.
        adapter: String,
        /// wgpu's message.
        message: String,
    },

    /// The device was lost (driver reset, removal, or destroyed); every later call fails.
    #[error("the GPU device was lost: {0}")]
    DeviceLost(String),

    /// wgpu reported a validation or out-of-memory error outside any error scope.
    #[error("GPU error in `{context}`: {message}")]
    Gpu {
        /// The kernel or call that was running.
        context: String,
        /// wgpu's message.
        message: String,
    },

    /// Mapping a buffer for readback failed.
    #[error("reading back from the GPU failed: {0}")]
    Map(String),

    /// An op needs a GPU and the context is CPU-only (or the reverse).
    #[error("{op}: {message}")]
    Unsupported {
        /// The op.
        op: &'static str,
        /// What it needs.
        message: String,
    },

    /// Reading a file or a model failed; names the file or tensor.
    #[error("{what}: {message}")]
    Io {
        /// The file or tensor.
        what: String,
        /// What went wrong.
        message: String,
    },

    /// A gradient reached an op that the autograd tape recorded without a backward rule.
    #[error("backward: `{op}` has no gradient; detach its inputs or run it under `autograd::no_grad`")]
    NoGradient {
        /// The op without a rule.
        op: &'static str,
    },

    /// A backward reached an op whose saved tensors an earlier backward freed.
    #[error("{op}: the tape entry of `{entry}` was freed by an earlier backward; use `backward_retained` to keep it")]
    TapeFreed {
        /// The call that failed (`backward`).
        op: &'static str,
        /// The op whose entry was freed.
        entry: &'static str,
    },

    /// Text in a small language (an s-expression body, a config) failed to parse or check.
    #[error("{code} at {position}: {message}")]
    Syntax {
        /// The error code, e.g. `E-SCAN-002` (see `element_scan::diagnose::code`).
        code: &'static str,
        /// Where: `line:col (byte n)`.
        position: String,
        /// What is wrong, naming the offending form.
        message: String,
    },
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Shorthand for [`Error::Shape`].
    pub fn shape(op: &'static str, arg: &'static str, expected: impl Into<String>, actual: &[usize]) -> Self {
        Error::Shape {
            op,
            arg,
            expected: expected.into(),
            actual: actual.into(),
        }
    }

    /// Shorthand for [`Error::Value`].
    pub fn value(op: &'static str, arg: &'static str, expected: impl Into<String>, actual: impl ToString) -> Self {
        Error::Value {
            op,
            arg,
            expected: expected.into(),
            actual: actual.to_string(),
        }
    }

    /// Shorthand for [`Error::Io`]: `what` (the file or tensor) and what went wrong.
    pub fn io(what: impl ToString, message: impl Into<String>) -> Self {
        Error::Io {
            what: what.to_string(),
            message: message.into(),
        }
    }

    /// Shorthand for [`Error::ShapeMismatch`].
    pub fn mismatch(
        op: &'static str,
        lhs_name: &'static str,
        lhs: &[usize],
        rhs_name: &'static str,
        rhs: &[usize],
    ) -> Self {
        Error::ShapeMismatch {
            op,
            lhs_name,
            lhs: lhs.into(),
            rhs_name,
            rhs: rhs.into(),
        }
    }
}
