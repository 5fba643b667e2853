//! The s-expression front end: a parser fuzz that never panics and whose errors carry
//! positions, and every error code of the spec at the offending form.

use wgsl_compute::check::Rng;
use wgsl_compute::element_scan::{Bindings, ElementScan};
use wgsl_compute::Error;

use super::{
    cpu, norm_capped_scan_bindings, random, tanh_scan_bindings, MAX_PLUS_REVERSE_SCAN, NORM_CAPPED_SCAN, TANH_SCAN,
};

/// Parses `text` with the bindings of spec program 1; any error must carry a position.
fn parse_never_panics(text: &str, bind: &Bindings) {
    match ElementScan::from_sexpr(text, bind) {
        Ok(_) => {}
        Err(Error::Syntax { position, code, .. }) => {
            assert!(
                position.contains(':') && position.contains("byte"),
                "{code}: no position in {position:?} for {text:?}"
            );
        }
        Err(e) => panic!("non-syntax error {e} for {text:?}"),
    }
}

#[test]
fn element_scan_parser_fuzz_never_panics_and_errors_have_positions() {
    let mut rng = Rng::new(510);
    let bind = tanh_scan_bindings(&mut rng, 2, 3, 4);
    let pieces = [
        "(",
        ")",
        "[",
        "]",
        " ",
        "element-scan",
        "lambda",
        "let",
        "list",
        "x",
        "h",
        "a",
        "initial",
        "decay",
        ":axis",
        "1",
        "-1",
        "1.5e3",
        "(tanh",
        "(+",
        "(sum",
        ":axes",
        "[-1]",
        ":keepdims",
        "true",
        "\n",
        ";c\n",
        "\"",
        ":",
        "shape",
        "broadcast-to",
        "zeros",
        "slice",
        "-",
        "1e999",
        "#",
        "é",
        "(where (< h x) h x)",
    ];
    for _ in 0..1500 {
        let n = rng.below(30);
        let text: String = (0..n)
            .map(|_| pieces[rng.below(pieces.len())])
            .collect::<Vec<_>>()
            .join(" ");
        parse_never_panics(&text, &bind);
    }
    for base in [TANH_SCAN, NORM_CAPPED_SCAN, MAX_PLUS_REVERSE_SCAN] {
        let chars: Vec<char> = base.chars().collect();
        for _ in 0..400 {
            let mut c = chars.clone();
            for _ in 0..1 + rng.below(3) {
                let i = rng.below(c.len());
                match rng.below(3) {
                    0 => {
                        c.remove(i);
                    }
                    1 => c.insert(i, ['(', ')', '[', ']', ' ', ':', '1', 'x', '-'][rng.below(9)]),
                    _ => {
                        let j = rng.below(c.len());
                        c.swap(i, j)
                    }
                }
            }
            parse_never_panics(&c.into_iter().collect::<String>(), &bind);
        }
    }
    // Deep nesting is an error, not a stack overflow.
    let deep = "(".repeat(100_000);
    assert!(matches!(
        ElementScan::from_sexpr(&deep, &bind),
        Err(Error::Syntax { code: "E-READ-001", .. })
    ));
}

/// The error `text` gives with `bind`: its code and position, checked against `at`, the text
/// of the offending form (its first occurrence).
#[track_caller]
fn expect_error(text: &str, bind: &Bindings, code: &str, at: &str, says: &str) {
    let e = ElementScan::from_sexpr(text, bind)
        .err()
        .unwrap_or_else(|| panic!("{code}: no error for {text}"));
    let msg = e.to_string();
    let Error::Syntax {
        code: got,
        position,
        message,
    } = e
    else {
        panic!("{code}: not a syntax error: {msg}")
    };
    assert_eq!(got, code, "{msg}");
    let byte = text.find(at).unwrap_or_else(|| panic!("`{at}` not in text"));
    let line = 1 + text[..byte].matches('\n').count();
    let col = 1 + byte - text[..byte].rfind('\n').map(|i| i + 1).unwrap_or(0);
    assert_eq!(position, format!("{line}:{col} (byte {byte})"), "{code}: {msg}");
    assert!(
        message.contains(says),
        "{code}: message {message:?} should name `{says}`"
    );
}

#[test]
fn element_scan_errors_carry_the_spec_codes_and_positions() {
    let mut rng = Rng::new(511);
    let bind = tanh_scan_bindings(&mut rng, 2, 3, 4)
        .parameter("w", random(&mut rng, &[4], -1.0, 1.0))
        .context_scalar("lr", 0.1);
    let scan = |body: &str| {
        format!("(element-scan (lambda (h x a) {body})\n  initial (list x (broadcast-to decay (shape x))) :axis 1)")
    };
    expect_error(&scan("(+ h (* x decay))"), &bind, "E-FLOW-002", "decay))", "decay");
    expect_error(&scan("(* w h)"), &bind, "E-SCAN-001", "w h", "w");
    expect_error(&scan("(* lr h)"), &bind, "E-SCAN-001", "lr h", "lr");
    expect_error(&scan("(matmul h x)"), &bind, "E-SCAN-002", "(matmul", "matmul");
    expect_error(&scan("(+ h (index x 0))"), &bind, "E-SCAN-003", "(index", "index");
    expect_error(
        &scan("(element-scan (lambda (g y) y) h (list x) :axis 0)"),
        &bind,
        "E-SCAN-004",
        "(element-scan (lambda (g",
        "element-scan",
    );
    expect_error(
        &scan("(stop-gradient h)"),
        &bind,
        "E-SCAN-005",
        "(stop-gradient",
        "stop-gradient",
    );
    expect_error(
        &scan("(+ h (random-normal))"),
        &bind,
        "E-SCAN-006",
        "(random-normal",
        "random-normal",
    );
    expect_error(&scan("(metric h)"), &bind, "E-SCAN-007", "(metric", "metric");
    expect_error(&scan("(+ h (sum x :axes [-1]))"), &bind, "E-SCAN-008", "(sum", "sum");
    expect_error(
        &scan("(with-numerics :precision :bf16 (tanh h))"),
        &bind,
        "E-SCAN-011",
        "(with-numerics",
        "bf16",
    );
    // A 17-value vector state; a sequence 17 wide.
    let bind2 = norm_capped_scan_bindings(&mut rng, 2, 3, 2);
    let wide = NORM_CAPPED_SCAN.replace("(zeros [batch heads 16])", "(zeros [batch heads 17])");
    expect_error(&wide, &bind2, "E-SCAN-009", "(element-scan", "17");
    let bind17 = Bindings::new()
        .tensor("x", random(&mut rng, &[2, 3, 2, 17], -1.0, 1.0))
        .tensor("decay", random(&mut rng, &[3, 2, 1], 0.0, 1.0))
        .number("batch", 2.0)
        .number("time", 3.0)
        .number("heads", 2.0);
    expect_error(NORM_CAPPED_SCAN, &bind17, "E-SCAN-009", "(element-scan", "17");
    // The initial state does not fit the sequences.
    let bad = tanh_scan_bindings(&mut rng, 2, 3, 4).tensor("initial", random(&mut rng, &[2, 5], 0.0, 1.0));
    expect_error(TANH_SCAN, &bad, "E-SCAN-010", "(element-scan", "[2, 5]");
    // Reader and name errors point at the offending character or symbol.
    expect_error(
        "(element-scan (lambda (h x a) h)",
        &bind,
        "E-READ-001",
        "(element-scan",
        "never closed",
    );
    expect_error(&scan("(+ h y)"), &bind, "E-NAME-001", "y)", "y");
    expect_error(&scan("(tanh h x)"), &bind, "E-FORM-001", "(tanh", "tanh");
    let unknown_keyword = scan("h").replace(":axis 1)", ":axis 1\n  :bogus 2)");
    expect_error(&unknown_keyword, &bind, "E-FORM-001", ":bogus", "bogus");
    // Around the scan, a bf16 region is fine: the recurrence still computes in f32.
    let region = format!("(with-numerics :precision :bf16 {TANH_SCAN})");
    let (a, b) = (
        ElementScan::from_sexpr(&region, &bind)
            .unwrap()
            .run(&cpu())
            .unwrap()
            .to_vec()
            .unwrap(),
        ElementScan::from_sexpr(TANH_SCAN, &bind)
            .unwrap()
            .run(&cpu())
            .unwrap()
            .to_vec()
            .unwrap(),
    );
    assert_eq!(a, b);
    // Captured numbers and functions are fine.
    let ok = "(let ((k 0.5) (f (lambda (u v) (* k (+ u v)))))
                (element-scan (lambda (h x a) (f h (* a x))) initial (list x (broadcast-to decay (shape x))) :axis 1))";
    assert!(ElementScan::from_sexpr(ok, &bind).is_ok());
}
