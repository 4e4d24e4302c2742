/// The sum of the decimal digits of `n`.
pub fn digit_sum(mut n: u64) -> u64 {
    let mut total = 0;
    while n > 0 {
        total += n % 10;
        n /= 10;
    }
    total
}

/// The digit sum taken again until one digit is left.
pub fn digital_root(mut n: u64) -> u64 {
    while n >= 10 {
        n = digit_sum(n);
    }
    n
}
