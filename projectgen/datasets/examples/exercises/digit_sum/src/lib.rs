pub fn digit_sum(n: u64) -> u64 {
    todo!("the sum of the digits of {n}")
}

pub fn digital_root(n: u64) -> u64 {
    todo!("the digital root of {n}")
}
