//! How figures are written for people: thousands separated, decimals only
//! where the value needs them. One rule for the console, tables, charts and
//! the published-figure lines.

/// A number as an axis or tooltip shows it: thousands separated, decimals
/// only where the value needs them.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 1000.0 {
        let n = v.round() as i64;
        let s = n.unsigned_abs().to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        if n < 0 {
            out.insert(0, '-');
        }
        out
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        trim(format!("{v:.1}"))
    } else if a >= 1.0 {
        trim(format!("{v:.2}"))
    } else if a == 0.0 {
        "0".into()
    } else {
        trim(format!("{v:.3}"))
    }
}

fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::num;

    #[test]
    fn numbers_read_as_a_reviewer_writes_them() {
        assert_eq!(num(1_234_567.4), "1,234,567");
        assert_eq!(num(-4_000.0), "-4,000");
        assert_eq!(num(12.50), "12.5");
        assert_eq!(num(0.1234), "0.123");
        assert_eq!(num(2.0), "2");
        assert_eq!(num(0.0), "0");
    }
}
