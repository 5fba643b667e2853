//! Recurrences on variables: the four associative scans, the minGRU mixer scans and element
//! scan programs. Each records its forward and, as its rule, the engine's own backward
//! (`scan::*_backward`, `mixer::mixer_scan_backward`, `ElementScan::grad_tensor`), which
//! reads the forward's inputs and output.

use super::var::{rule, Var};
use crate::element_scan::ElementScan;
use crate::error::{Error, Result};
use crate::mixer::{self, MixerKind, MixerPath};
use crate::scan;

/// An affine scan method on `Var`: `$fwd(a, b, h0)` with the rule `$bwd(a, h0, h, g)`.
macro_rules! affine_scan {
    ($(#[$doc:meta])* $name:ident, $fwd:path, $bwd:path) => {
        impl Var {
            $(#[$doc])*
            pub fn $name(a: &Var, b: &Var, h0: Option<&Var>) -> Result<Var> {
                let mut inputs = vec![a, b];
                inputs.extend(h0);
                Var::record(stringify!($name), &inputs, |t| {
                    let h = $fwd(t[0], t[1], t.get(2).copied())?;
                    let (a, h0, saved) = (t[0].clone(), t.get(2).map(|&x| x.clone()), h.clone());
                    Ok((
                        h,
                        rule(move |g, need| {
                            let d = $bwd(&a, h0.as_ref(), &saved, g)?;
                            let mut out = vec![need[0].then_some(d.da), need[1].then_some(d.db)];
                            if h0.is_some() {
                                out.push(need[2].then_some(d.dh0));
                            }
                            Ok(out)
                        }),
                    ))
                })
            }
        }
    };
}

affine_scan!(
    /// `scan::linear_scan`: a, b (B, T, D), h0 (B, D) or zeros -> h (B, T, D).
    linear_scan, scan::linear_scan, scan::linear_scan_backward
);
affine_scan!(
    /// `scan::matrix_scan`: A (B, T, N, 2, 2), b (B, T, N, 2), h0 (B, N, 2) -> h (B, T, N, 2).
    matrix_scan, scan::matrix_scan, scan::matrix_scan_backward
);
affine_scan!(
    /// `scan::matrix_affine_scan`: A (B, T, N, k, k), B (B, T, N, k, v), h0 (B, N, k, v) ->
    /// H (B, T, N, k, v).
    matrix_affine_scan, scan::matrix_affine_scan, scan::matrix_affine_scan_backward
);

impl Var {
    /// `scan::parallel_scan_log`: log_coeffs (B, T, D), log_values (B, T + 1, D) -> h (B, T, D).
    pub fn parallel_scan_log(log_coeffs: &Var, log_values: &Var) -> Result<Var> {
        Var::record("parallel_scan_log", &[log_coeffs, log_values], |t| {
            let h = scan::parallel_scan_log(t[0], t[1])?;
            let (lc, lv, saved) = (t[0].clone(), t[1].clone(), h.clone());
            Ok((
                h,
                rule(move |g, need| {
                    let d = scan::parallel_scan_log_backward(&lc, &lv, &saved, g)?;
                    Ok(vec![
                        need[0].then_some(d.d_log_coeffs),
                        need[1].then_some(d.d_log_values),
                    ])
                }),
            ))
        })
    }

    /// `mixer::mixer_scan` of `kind` on `path`: pre (B, T, 2D) -> h (B, T, D).
    pub fn mixer_scan(kind: MixerKind, path: MixerPath, pre: &Var) -> Result<Var> {
        Var::record(kind.name_static(), &[pre], |t| {
            let fwd = mixer::mixer_scan(kind, path, t[0])?;
            let (pre, h) = (t[0].clone(), fwd.h.clone());
            Ok((
                h,
                rule(move |g, _| Ok(vec![Some(mixer::mixer_scan_backward(&pre, &fwd, g)?)])),
            ))
        })
    }

    /// The element scan `program` with the named inputs bound to variables (the other
    /// inputs keep their bindings): its output, and as its rule `ElementScan::grad_tensor`.
    pub fn element_scan(program: &ElementScan, inputs: &[(&str, &Var)]) -> Result<Var> {
        let op = "element_scan";
        let vars: Vec<&Var> = inputs.iter().map(|(_, v)| *v).collect();
        let names: Vec<String> = inputs.iter().map(|(n, _)| n.to_string()).collect();
        Var::record(op, &vars, |t| {
            let mut p = program.clone();
            for (name, x) in names.iter().zip(t) {
                p = p.with_input(name, x)?;
            }
            let ctx = t[0].context().clone();
            let y = p.run(&ctx)?;
            Ok((
                y,
                rule(move |g, need| {
                    let mut grads = p.grad_tensor(&ctx, g)?;
                    names
                        .iter()
                        .zip(need)
                        .map(|(n, &want)| match (want, grads.remove(n)) {
                            (false, _) => Ok(None),
                            (true, Some(d)) => Ok(Some(d)),
                            (true, None) => Err(Error::value(op, "inputs", "inputs of the program", n.clone())),
                        })
                        .collect()
                }),
            ))
        })
    }
}
