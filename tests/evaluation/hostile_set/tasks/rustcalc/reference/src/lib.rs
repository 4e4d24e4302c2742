pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

pub fn sub(a: i64, b: i64) -> i64 {
    a - b
}

pub fn div(a: i64, b: i64) -> Option<i64> {
    if b == 0 { None } else { Some(a / b) }
}
