//! Browser front end of the engine (placeholder until the browser issue lands).
pub use engine;
