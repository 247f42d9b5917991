//! Values the arena drops: per-request resources (an open file, a counted
//! reference, a `String` buffer) handed to the arena with `alloc_owned`, released
//! when the request's work ends, with no cleanup code at each return.
//!
//! Each request places a log file, a handle on a shared cache and a buffer of its
//! own; its scratch step places a temporary file in a scope, dropped (and removed)
//! at the scope's end. `reset` then drops the request's values, most recent first,
//! and keeps the pages for the next request.
//!
//! Run it with `cargo run --example owned_values`.

use std::fs::{self, File};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use onewayalloc::OneWayAlloc;

/// A file that is removed when it is dropped.
struct TempFile {
    path: PathBuf,
    file: File,
}

impl TempFile {
    fn create(name: &str) -> std::io::Result<Self> {
        let path = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let file = File::create(&path)?;
        Ok(TempFile { path, file })
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

fn main() -> std::io::Result<()> {
    let cache = Arc::new(vec!["system.cpu", "disk.io", "net.eth0"]);
    let mut arena = OneWayAlloc::new();
    let mut paths = Vec::new();
    for request in 0..3 {
        // The request's values: dropped at the reset below, whatever path the
        // handler takes.
        let log = arena.alloc_owned(TempFile::create(&format!("owa-request-{request}"))?);
        let charts = arena.alloc_owned(Arc::clone(&cache));
        let body = arena.alloc_owned(String::new());
        for chart in charts.iter() {
            body.push_str(chart);
            body.push('\n');
        }
        writeln!(log.file, "request {request}: {} bytes", body.len())?;
        paths.push(log.path.clone());

        // A scratch step: its temporary file is removed at the scope's end, while
        // the request's values stay.
        let scratch_path = arena.scope(|step| -> std::io::Result<PathBuf> {
            let tmp = step.alloc_owned(TempFile::create(&format!("owa-step-{request}"))?);
            writeln!(tmp.file, "sorted charts")?;
            Ok(tmp.path.clone())
        })?;
        assert!(!scratch_path.exists(), "the step's file is gone");
        assert_eq!(arena.stats().pending_drops, 3);
        assert_eq!(Arc::strong_count(&cache), 2);

        arena.reset(); // drops body, charts, log (most recent first)
        assert_eq!(arena.stats().pending_drops, 0);
        assert_eq!(Arc::strong_count(&cache), 1);
        assert!(!paths[request].exists(), "the request's log is gone");
        println!("request {request}: its 3 values and its step's file dropped");
    }
    Ok(())
}
