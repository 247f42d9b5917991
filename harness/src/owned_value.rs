//! The value of the owned-values experiments (the `owned_values_1m` benchmark and
//! the `owned_string` op of `instructions`): a `String` and a number, so that its
//! destructor frees one `malloc` block.

/// A value with a destructor: a `String` and a number.
pub struct Value {
    /// Made by `String::from` (one `malloc`), freed by the destructor.
    pub name: String,
    /// The value's number.
    pub id: u64,
}

/// The `i`-th value.
#[inline(always)]
pub fn value(i: usize) -> Value {
    Value {
        name: String::from("chart.dimension"),
        id: i as u64,
    }
}
