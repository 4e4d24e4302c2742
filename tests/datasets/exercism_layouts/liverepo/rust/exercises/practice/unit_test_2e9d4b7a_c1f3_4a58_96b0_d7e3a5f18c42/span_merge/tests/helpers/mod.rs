// Spans written as text, for the tests' tables.
pub fn spans(text: &str) -> Vec<(u32, u32)> {
    text.split_whitespace()
        .map(|span| {
            let (start, end) = span.split_once('-').expect("start-end");
            (start.parse().unwrap(), end.parse().unwrap())
        })
        .collect()
}
