//! Small helpers to build JS values: plain objects from key/value pairs, errors as `Error`s.

use wasm_bindgen::{JsError, JsValue};

/// A plain JS object `{ key: value, ... }`.
pub(crate) fn object(fields: &[(&str, JsValue)]) -> JsValue {
    let obj = js_sys::Object::new();
    for (key, value) in fields {
        // Setting a property on a fresh plain object cannot fail.
        let _ = js_sys::Reflect::set(&obj, &JsValue::from_str(key), value);
    }
    obj.into()
}

/// An engine error as a JS `Error` carrying the engine's message.
pub(crate) fn error(e: impl std::fmt::Display) -> JsValue {
    JsError::new(&e.to_string()).into()
}
