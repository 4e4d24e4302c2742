use digit_sum::{digit_sum, digital_root};

#[test]
fn zero_has_no_digits_to_add() {
    assert_eq!(digit_sum(0), 0);
}

#[test]
#[ignore]
fn several_digits() {
    assert_eq!(digit_sum(1234), 10);
}

#[test]
#[ignore]
fn largest_number() {
    assert_eq!(digit_sum(u64::MAX), 87);
}

#[test]
#[ignore]
fn root_of_a_large_number() {
    assert_eq!(digital_root(987654321), 9);
}
