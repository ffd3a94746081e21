use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` so readers see the old file or the new one, never a torn one:
/// a temporary file in the same directory, flushed to disk, then renamed over `path`.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut file = tempfile::Builder::new()
        .prefix(".chartkit-")
        .tempfile_in(dir)
        .map_err(|e| with_path(e, dir))?;
    file.write_all(bytes).map_err(|e| with_path(e, path))?;
    file.as_file().sync_all().map_err(|e| with_path(e, path))?;
    // Helm writes indexes 0644; a temp file starts 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(|e| with_path(e, path))?;
    }
    file.persist(path).map_err(|e| with_path(e.error, path))?;
    Ok(())
}

fn with_path(error: std::io::Error, path: &Path) -> std::io::Error {
    std::io::Error::new(error.kind(), format!("`{}`: {error}", path.display()))
}
