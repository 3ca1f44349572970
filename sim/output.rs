//! Where fleetsim may write, and how: output folders replaced whole through a staging folder beside
//! them, single files replaced atomically (or written in place when they are devices or pipes), and
//! the cleanup of staging folders left by an interrupted or killed process.
//!
//! Architecture invariant: fleetsim never writes over a file or folder it did not write. A folder
//! target must be absent, empty, or recognised by its owner (a report's marker file, a sweep's
//! manifest); the working directory and its ancestors are never targets, because replacing a folder
//! whole means renaming it away. Staging folders are named `.<name>.<what>-<pid>`, so a later run
//! into the same target can tell a dead process's leftovers from a live one's.

use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The size of the buffer a file written as it is made goes through ([`Staging::write_with`]),
/// and of the writes that pass it by.
pub const WRITE_THROUGH: usize = 1 << 16;

/// Why an output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The target is not fleetsim's to write (invalid input: exit 2). The message names it.
    #[error("{0}")]
    Refused(String),
    /// Writing failed; the path says where. (The error is not a `source`, so that a chain printed
    /// with `{:#}` does not repeat it.)
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    /// A signal arrived while the output was being written; what was staged has been removed.
    #[error("interrupted")]
    Interrupted,
}

impl OutputError {
    pub fn io(path: &Path, source: io::Error) -> OutputError {
        OutputError::Io { path: path.to_path_buf(), error: source }
    }
}

/// What an existing folder target holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Nothing there yet.
    Absent,
    Empty,
    /// A folder with entries: its owner must recognise it before it is replaced or written into.
    NotEmpty,
}

/// A folder target, its symbolic links followed.
#[derive(Clone, Debug)]
pub struct FolderTarget {
    /// The folder to write (the real folder when `--out` is a symbolic link to one).
    pub path: PathBuf,
    pub existing: Existing,
}

/// Checks what every folder output needs: a path that names a folder of its own (not the working
/// directory or one of its ancestors), and that is a folder or nothing. Nothing is written.
pub fn folder_target(dir: &Path) -> Result<FolderTarget, OutputError> {
    let shown = dir.display();
    if !matches!(dir.components().next_back(), Some(Component::Normal(_))) {
        return Err(OutputError::Refused(format!(
            "{shown}: not a folder of its own (the working directory, a parent or a root); give a new folder such as --out reports/NAME"
        )));
    }
    let mut path = dir.to_path_buf();
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            refuse_working_directory(dir, &path)?;
            return Ok(FolderTarget { path, existing: Existing::Absent });
        }
        Err(e) => return Err(OutputError::io(dir, e)),
        Ok(meta) if meta.file_type().is_symlink() => match fs::metadata(dir) {
            Ok(target) if target.is_dir() => path = fs::canonicalize(dir).map_err(|e| OutputError::io(dir, e))?,
            Ok(_) => return Err(not_a_folder(dir)),
            Err(_) => {
                return Err(OutputError::Refused(format!(
                    "{shown}: a symbolic link to nothing; give a folder, or remove the link"
                )));
            }
        },
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => return Err(not_a_folder(dir)),
    }
    refuse_working_directory(dir, &path)?;
    let mut entries = fs::read_dir(&path).map_err(|e| OutputError::io(&path, e))?;
    let existing = if entries.next().is_some() { Existing::NotEmpty } else { Existing::Empty };
    Ok(FolderTarget { path, existing })
}

fn not_a_folder(dir: &Path) -> OutputError {
    OutputError::Refused(format!("{}: exists and is not a folder; choose another --out", dir.display()))
}

/// Refuses the working directory and its ancestors, by name and (when it exists) by what it is.
fn refuse_working_directory(dir: &Path, path: &Path) -> Result<(), OutputError> {
    let Ok(cwd) = std::env::current_dir().and_then(fs::canonicalize) else { return Ok(()) };
    let by_name = std::path::absolute(path).map(|p| normalize(&p)).ok();
    let real = fs::canonicalize(path).ok();
    if by_name.iter().chain(&real).any(|p| cwd.starts_with(p)) {
        return Err(OutputError::Refused(format!(
            "{}: is the working directory or one of its parents; fleetsim replaces an output folder whole, so give a folder of its own such as --out reports/NAME",
            dir.display()
        )));
    }
    Ok(())
}

/// `a/b/../c` → `a/c`, without looking at the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

// ----- staging and cleanup ----------------------------------------------------------------------

/// Staging folders and temporary files of this process that a signal handler must remove.
static STAGED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set by [`remove_staged`]: writers stop before their next file.
static STOPPING: AtomicBool = AtomicBool::new(false);

fn staged() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    STAGED.lock().unwrap_or_else(|e| e.into_inner())
}

fn unregister(list: &mut Vec<PathBuf>, path: &Path) {
    list.retain(|p| p != path);
}

fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// For a signal handler: stops writers and removes every staging folder and temporary file of this
/// process. Replacing a finished folder holds the same lock, so a target is never left half moved.
pub fn remove_staged() {
    STOPPING.store(true, Ordering::SeqCst);
    let list = staged();
    for path in list.iter() {
        // A writer may be finishing its current file: try again until the folder is gone.
        for _ in 0..100 {
            if remove_any(path).is_ok() && fs::symlink_metadata(path).is_err() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Whether [`remove_staged`] was called: writers give up with [`OutputError::Interrupted`].
pub fn interrupted() -> bool {
    STOPPING.load(Ordering::SeqCst)
}

/// Whether process `pid` is alive (a process we may not signal is alive too).
#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: signal 0 checks for existence and permission; it sends nothing.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    true // cannot tell: never remove another process's staging
}

/// The process id in a staging name `.<name>.<what>-<pid>[-<suffix>]`, for a known `what`.
fn staging_pid(entry: &str, name: &str) -> Option<u32> {
    let rest = entry.strip_prefix('.')?.strip_prefix(name)?.strip_prefix('.')?;
    let (what, pid) = rest.split_once('-')?;
    if !["partial", "old", "merging", "tmp"].contains(&what) {
        return None;
    }
    let digits = pid.split('-').next()?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Removes what dead processes staged beside `target` (after a SIGKILL or a power cut).
pub fn remove_stale(target: &Path) -> Result<(), OutputError> {
    let (parent, name) = parent_and_name(target);
    let Ok(entries) = fs::read_dir(&parent) else { return Ok(()) };
    for entry in entries.flatten() {
        let entry_name = entry.file_name().to_string_lossy().to_string();
        if let Some(pid) = staging_pid(&entry_name, &name)
            && pid != std::process::id()
            && !alive(pid)
        {
            remove_any(&entry.path()).map_err(|e| OutputError::io(&entry.path(), e))?;
        }
    }
    Ok(())
}

fn parent_and_name(target: &Path) -> (PathBuf, String) {
    let parent = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
    let name = target.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "output".into());
    (parent, name)
}

/// A folder filled beside its target and then put in its place whole. Dropped without
/// [`Staging::commit`], it is removed.
pub struct Staging {
    path: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Staging {
    /// Creates `.<name>.<what>-<pid>` beside `target` (creating the parent folders), after removing
    /// what dead processes left there.
    pub fn beside(target: &Path, what: &str) -> Result<Staging, OutputError> {
        let (parent, name) = parent_and_name(target);
        fs::create_dir_all(&parent).map_err(|e| OutputError::io(&parent, e))?;
        remove_stale(target)?;
        let path = parent.join(format!(".{name}.{what}-{}", std::process::id()));
        remove_any(&path).map_err(|e| OutputError::io(&path, e))?;
        let mut list = staged();
        if interrupted() {
            return Err(OutputError::Interrupted);
        }
        fs::create_dir(&path).map_err(|e| OutputError::io(&path, e))?;
        list.push(path.clone());
        Ok(Staging { path, target: target.to_path_buf(), committed: false })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes` at `relative` inside the staging folder.
    pub fn write(&self, relative: &Path, bytes: &[u8]) -> Result<(), OutputError> {
        let path = self.place(relative)?;
        fs::write(&path, bytes).map_err(|e| OutputError::io(&path, e))
    }

    /// Writes the file at `relative` inside the staging folder with `write`, through a buffer, as
    /// it is made (for files too large to hold). The buffer gathers small writes; a write of
    /// [`WRITE_THROUGH`] bytes or more goes to the file without being copied into it, which is how
    /// the report's tables and status files come, in pieces from buffers of their own.
    pub fn write_with(
        &self,
        relative: &Path,
        write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
    ) -> Result<(), OutputError> {
        let path = self.place(relative)?;
        let file = fs::File::create(&path).map_err(|e| OutputError::io(&path, e))?;
        let mut out = io::BufWriter::with_capacity(WRITE_THROUGH, file);
        let made = write(&mut out).and_then(|()| Ok(out.flush()?));
        made.map_err(|e| OutputError::io(&path, into_io_error(e)))
    }

    /// Where `relative` goes inside the staging folder, its parent folders made; refused once a
    /// signal has arrived.
    fn place(&self, relative: &Path) -> Result<PathBuf, OutputError> {
        test_delay();
        if interrupted() {
            return Err(OutputError::Interrupted);
        }
        let path = self.path.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| OutputError::io(parent, e))?;
        }
        Ok(path)
    }

    /// Puts the staging folder in the place of the target, replacing an existing target only now
    /// that the new one is complete.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let (parent, name) = parent_and_name(&self.target);
        let old = parent.join(format!(".{name}.old-{}", std::process::id()));
        let mut list = staged();
        if interrupted() {
            return Err(OutputError::Interrupted);
        }
        let had_target = fs::symlink_metadata(&self.target).is_ok();
        if had_target {
            remove_any(&old).map_err(|e| OutputError::io(&old, e))?;
            fs::rename(&self.target, &old).map_err(|e| OutputError::io(&self.target, e))?;
            list.push(old.clone());
        }
        if let Err(e) = fs::rename(&self.path, &self.target) {
            if had_target && fs::rename(&old, &self.target).is_ok() {
                unregister(&mut list, &old);
            }
            return Err(OutputError::io(&self.target, e));
        }
        unregister(&mut list, &self.path);
        self.committed = true;
        drop(list);
        if had_target {
            let removed = remove_any(&old);
            unregister(&mut staged(), &old);
            removed.map_err(|e| OutputError::io(&old, e))?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let mut list = staged();
            let _ = remove_any(&self.path);
            unregister(&mut list, &self.path);
        }
    }
}

/// The I/O error inside a writer's failure (CSV and JSON writers wrap the file's errors).
fn into_io_error(e: anyhow::Error) -> io::Error {
    let e = match e.downcast::<io::Error>() {
        Ok(io) => return io,
        Err(e) => e,
    };
    let e = match e.downcast::<csv::Error>() {
        // A CSV writer fails only when its output does; anything else is told as it is.
        Ok(csv) => match csv.into_kind() {
            csv::ErrorKind::Io(io) => return io,
            kind => return io::Error::other(format!("{kind:?}")),
        },
        Err(e) => e,
    };
    match e.downcast::<serde_json::Error>() {
        Ok(json) => io::Error::from(json),
        Err(e) => io::Error::other(format!("{e:#}")),
    }
}

/// For the tests of interrupted writing only: `FLEETSIM_TEST_WRITE_DELAY_MS` pauses before each
/// staged file, so that a test can send a signal while a staging folder exists.
fn test_delay() {
    static DELAY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let ms = *DELAY
        .get_or_init(|| std::env::var("FLEETSIM_TEST_WRITE_DELAY_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(0));
    if ms > 0 {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

// ----- single files ------------------------------------------------------------------------------

/// Writes one output file whole or not at all. A regular file (or a symbolic link to one) is
/// replaced atomically: a temporary file in the same folder, renamed over it (the link is kept and
/// its target replaced). Anything else that exists and is not a folder (a character device such as
/// `/dev/null`, a FIFO, `/dev/stdout`) is written directly and never replaced. A closed pipe ends
/// the write quietly.
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            Err(OutputError::Refused(format!("{}: is a folder; give a file name", path.display())))
        }
        Ok(meta) if !meta.is_file() => write_in_place(path, bytes),
        Ok(meta) => {
            let real = fs::canonicalize(path).map_err(|e| OutputError::io(path, e))?;
            replace_file(&real, bytes, Some(meta.permissions()))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if fs::symlink_metadata(path).is_ok() {
                return Err(OutputError::Refused(format!(
                    "{}: a symbolic link to nothing; give a file, or remove the link",
                    path.display()
                )));
            }
            replace_file(path, bytes, None)
        }
        Err(e) => Err(OutputError::io(path, e)),
    }
}

fn write_in_place(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let written =
        fs::OpenOptions::new().write(true).open(path).and_then(|mut f| f.write_all(bytes).and_then(|()| f.flush()));
    match written {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| OutputError::io(path, e)),
    }
}

/// Standard output, ending quietly when the reader has gone (`fleetsim … - | head`).
pub fn write_stdout(bytes: &[u8]) -> Result<(), OutputError> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(|e| OutputError::io(Path::new("standard output"), e)),
    }
}

fn replace_file(path: &Path, bytes: &[u8], permissions: Option<fs::Permissions>) -> Result<(), OutputError> {
    let (parent, name) = parent_and_name(path);
    remove_stale(path)?;
    let mut builder = tempfile::Builder::new();
    let prefix = format!(".{name}.tmp-{}-", std::process::id());
    builder.prefix(&prefix);
    #[cfg(unix)]
    if permissions.is_none() {
        use std::os::unix::fs::PermissionsExt;
        // What a plain create gives (the umask applies), not tempfile's private 0600.
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut file = builder.tempfile_in(&parent).map_err(|e| OutputError::io(&parent, e))?;
    let temporary = file.path().to_path_buf();
    staged().push(temporary.clone());
    let result = (|| {
        file.write_all(bytes)?;
        file.as_file().sync_all()?;
        if let Some(p) = permissions {
            fs::set_permissions(file.path(), p)?;
        }
        file.persist(path).map(drop).map_err(|e| e.error)
    })();
    unregister(&mut staged(), &temporary);
    result.map_err(|e| OutputError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_names_carry_the_pid() {
        assert_eq!(staging_pid(".report.partial-123", "report"), Some(123));
        assert_eq!(staging_pid(".report.old-9", "report"), Some(9));
        assert_eq!(staging_pid(".report.tmp-77-Ab3x", "report"), Some(77));
        assert_eq!(staging_pid(".report.partial-", "report"), None);
        assert_eq!(staging_pid(".report.notes-12", "report"), None);
        assert_eq!(staging_pid(".reports.partial-12", "report"), None);
        assert_eq!(staging_pid("report.partial-12", "report"), None);
    }

    #[test]
    fn lexical_normalization() {
        assert_eq!(normalize(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
    }
}
