//! The context query's answer as JSON, the body of the HTTP experiment's responses:
//! the virtual chart grouped by dimension name, the groups in name order (a map's
//! order is random, and every strategy must send the same bytes).
//!
//! ```text
//! {"context":"apps.cpu","seed":7,"dimensions":100000,"checksum":512345.5,
//!  "groups":[{"name":"dim0","dimensions":1000,"points":30000,"sum":15342000,"average":511.4},...]}
//! ```
//! (on one line). Numbers are Rust's `Display` of integers and `f64` (the shortest
//! form that reads back as the same value, never an exponent), which is valid JSON.

use std::fmt::{self, Write};

use crate::query::{Group, QueryAlloc, QueryResult};

/// The context every query asks for.
pub const CONTEXT: &str = "apps.cpu";

/// Writes the answer of the query `result` (run with `seed`) to `out`. The groups
/// are sorted in a `Vec` of the query's own allocator.
pub fn write_answer<'a, A: QueryAlloc<'a>>(
    out: &mut impl Write,
    result: &QueryResult<'_, 'a, A>,
    seed: usize,
) -> fmt::Result {
    let groups = result.groups_by_name();
    write_answer_of(out, seed, result.dimensions(), result.checksum(), &groups)
}

/// Writes the answer made of these figures and groups (in name order) to `out`: what
/// [`write_answer`] writes of a query's result, from a copy of it.
pub fn write_answer_of(
    out: &mut impl Write,
    seed: usize,
    dimensions: usize,
    checksum: f64,
    groups: &[Group<'_>],
) -> fmt::Result {
    out.write_str("{\"context\":")?;
    write_str(out, CONTEXT)?;
    write!(
        out,
        ",\"seed\":{seed},\"dimensions\":{dimensions},\"checksum\":{checksum},\"groups\":["
    )?;
    for (i, group) in groups.iter().enumerate() {
        if i > 0 {
            out.write_char(',')?;
        }
        out.write_str("{\"name\":")?;
        write_str(out, group.name)?;
        write!(
            out,
            ",\"dimensions\":{},\"points\":{},\"sum\":{},\"average\":{}}}",
            group.dimensions,
            group.points,
            group.sum,
            group.sum / group.points.max(1) as f64
        )?;
    }
    out.write_str("]}")
}

/// `s` as a JSON string, quoted and escaped.
fn write_str(out: &mut impl Write, s: &str) -> fmt::Result {
    out.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => out.write_str("\\\"")?,
            '\\' => out.write_str("\\\\")?,
            c if u32::from(c) < 0x20 => write!(out, "\\u{:04x}", u32::from(c))?,
            c => out.write_char(c)?,
        }
    }
    out.write_char('"')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::{Database, answer};
    use onewayalloc::allocator_api2::alloc::Global;

    #[test]
    fn escapes_strings() {
        let mut out = String::new();
        write_str(&mut out, "a\"b\\c\n").unwrap();
        assert_eq!(out, r#""a\"b\\c\u000a""#);
    }

    #[test]
    fn answer_is_json_with_groups_in_name_order() {
        let db = Database::new(3, 12, 4);
        let body = answer(Global, &db, 5, |result| {
            let mut body = String::new();
            write_answer(&mut body, result, 5).unwrap();
            body
        });
        let value: serde_json::Value = serde_json::from_str(&body).unwrap();
        let groups = value["groups"].as_array().unwrap();
        assert_eq!(groups.len(), 12);
        let names: Vec<&str> = groups.iter().map(|g| g["name"].as_str().unwrap()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        assert_eq!(value["dimensions"], 36);
        assert!(
            groups
                .iter()
                .all(|g| g["dimensions"] == 3 && g["points"] == 12)
        );
    }
}
