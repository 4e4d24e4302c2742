use rustcalc::{add, div, sub};

#[test]
fn adds() {
    assert_eq!(add(2, 3), 5);
}

#[test]
fn subtracts() {
    assert_eq!(sub(7, 10), -3);
}

#[test]
fn divides() {
    assert_eq!(div(9, 2), Some(4));
    assert_eq!(div(1, 0), None);
}
