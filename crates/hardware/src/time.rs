//! DCM time: int32 milliseconds that roll over at 2^31.
//!
//! Comparisons use serial-number arithmetic (RFC 1982): `a` is before `b` when
//! `b - a`, computed with wrapping, is positive. Any two times less than 2^31 ms
//! (24.8 days) apart compare correctly, across the roll-over too.

/// A DCM time in milliseconds.
pub type DcmTime = i32;

/// `a` is strictly before `b`.
#[inline]
pub fn is_before(a: DcmTime, b: DcmTime) -> bool {
    b.wrapping_sub(a) > 0
}

/// `b - a` in milliseconds, across the roll-over.
#[inline]
pub fn elapsed(a: DcmTime, b: DcmTime) -> i32 {
    b.wrapping_sub(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordering_holds_across_the_rollover() {
        assert!(is_before(i32::MAX - 5, i32::MIN + 5));
        assert!(!is_before(i32::MIN + 5, i32::MAX - 5));
        assert_eq!(elapsed(i32::MAX - 5, i32::MIN + 4), 10);
        assert!(!is_before(7, 7));
    }
}
