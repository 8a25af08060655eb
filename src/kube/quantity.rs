//! Kubernetes' resource quantities (`1Gi`, `1G`, `500m`, `129e6`): a number and a
//! suffix, binary (Ki ... Ei, powers of 1024), decimal (n, u, m, k, M ... E, powers of
//! 1000; `k` lower-case, `m` milli) or an exponent. A pod's limits come back in the
//! form they were written, so `1G` of memory is 10^9 bytes, not blobrace's 2^30.

use anyhow::{Result, bail};

/// A quantity's value.
fn value(quantity: &str) -> Result<f64> {
    let q = quantity.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let Ok(number) = number.parse::<f64>() else {
        bail!(
            "{quantity:?} is not a Kubernetes quantity (a number, then Ki, Mi, Gi, m, k, M, G ...)"
        );
    };
    let scale = match suffix {
        "" => 1.0,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        e if e.starts_with(['e', 'E']) => match e[1..].parse::<i32>() {
            Ok(exponent) => 10f64.powi(exponent),
            Err(_) => bail!("{quantity:?}: {e:?} is no exponent"),
        },
        other => bail!("{quantity:?}: unknown suffix {other:?}"),
    };
    let v = number * scale;
    if !v.is_finite() || v < 0.0 {
        bail!("{quantity:?} is not a limit");
    }
    Ok(v)
}

/// A memory quantity in bytes (a fraction of a byte rounds up, as Kubernetes does).
pub fn memory_bytes(quantity: &str) -> Result<u64> {
    Ok(value(quantity)?.ceil() as u64)
}

/// A CPU quantity in CPUs (`500m` is 0.5).
pub fn cpus(quantity: &str) -> Result<f64> {
    value(quantity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_decimal_suffixes_differ() {
        assert_eq!(memory_bytes("1Gi").unwrap(), 1 << 30);
        assert_eq!(memory_bytes("1G").unwrap(), 1_000_000_000);
        assert_eq!(memory_bytes("768Mi").unwrap(), 768 << 20);
        assert_eq!(memory_bytes("129e6").unwrap(), 129_000_000);
        assert_eq!(memory_bytes("1073741824").unwrap(), 1 << 30);
        assert_eq!(memory_bytes("1.5Gi").unwrap(), 3 << 29);
        assert_eq!(memory_bytes("1500m").unwrap(), 2);
    }

    #[test]
    fn cpus_in_millicores_and_whole() {
        assert_eq!(cpus("500m").unwrap(), 0.5);
        assert_eq!(cpus("2").unwrap(), 2.0);
        assert_eq!(cpus("1.5").unwrap(), 1.5);
        assert_eq!(cpus("250m").unwrap(), 0.25);
    }

    #[test]
    fn what_is_no_quantity_is_refused() {
        for bad in ["", "Gi", "1GB", "1gi", "-1Gi", "1e", "one"] {
            assert!(value(bad).is_err(), "{bad:?} accepted");
        }
    }
}
