//! [`NativeBackend`]: the workspace on a tmpfs of its own (size-capped, nosuid, nodev,
//! noexec), each step a run of the shared [`Engine`] with the workspace mounted writable
//! (`SandboxSpec::workspace`): policy, pre-scan, isolation, seccomp, network, the secret
//! scan and the monitor all apply, and an executor that cannot mount a workspace refuses.
use crate::SessionError;
use crate::backend::{Action, Backend, BackendCapabilities, Position, Restore};
use crate::model::StepSpec;
use crate::parking::ParkingLot;
use crate::snapshot::{self, Packed};
use rustix::mount::{MountFlags, UnmountFlags};
use skillgate::Engine;
use skillgate_core::{Caller, ExecOutcome, Language, Skill, Workspace};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The name a step's skill has in policy decisions, reports and the audit trail.
pub const STEP_SKILL: &str = "session-step";

/// The name of a workspace directory (in the temporary directory) begins with this,
/// then the owning process's id and `-`.
const WORKSPACE_PREFIX: &str = "skillgate-session-";

/// Unmounts and removes the workspaces of processes that are gone (killed before they
/// could clean up); returns how many.
pub fn reclaim_stale_workspaces() -> std::io::Result<u32> {
    let mut n = 0;
    for entry in std::fs::read_dir(std::env::temp_dir())? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(WORKSPACE_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        let path = entry.path();
        // Not mounted (any more) is fine: the directory goes either way.
        let _ = rustix::mount::unmount(&path, UnmountFlags::DETACH);
        std::fs::remove_dir_all(&path)?;
        n += 1;
    }
    Ok(n)
}

/// Where a workspace's tmpfs is mounted.
#[derive(Debug)]
enum Place {
    /// A directory of its own in the temporary directory, removed with the workspace.
    Temp(tempfile::TempDir),
    /// Session `id`'s slot in a [`ParkingLot`]; left mounted at drop once `parked`.
    Lot {
        lot: ParkingLot,
        id: String,
        dir: PathBuf,
        parked: bool,
    },
}

/// A directory with a tmpfs of its own mounted on it; unmounted (and a temporary
/// directory removed) when dropped, unless it was parked for a later process.
#[derive(Debug)]
struct Tmpfs {
    place: Place,
    bytes: u64,
    mounted: bool,
    /// Mounted and not handed out since: already what [`Tmpfs::fresh`] would make.
    pristine: bool,
}

impl Tmpfs {
    fn new(bytes: u64) -> Result<Tmpfs, SessionError> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("{WORKSPACE_PREFIX}{}-", std::process::id()))
            .tempdir()
            .map_err(|e| SessionError::Backend(format!("creating a workspace directory: {e}")))?;
        let mut t = Tmpfs {
            place: Place::Temp(dir),
            bytes,
            mounted: false,
            pristine: false,
        };
        t.fresh()?;
        Ok(t)
    }

    /// Session `id`'s workspace in `lot`: the one parked there, with where it stands, or
    /// a new, empty one.
    fn in_lot(
        lot: ParkingLot,
        id: &str,
        bytes: u64,
    ) -> Result<(Tmpfs, Option<Position>), SessionError> {
        let io = |what: &str, e: std::io::Error| {
            SessionError::Backend(format!("{what} of session {id}: {e}"))
        };
        let dir = lot
            .workspace_dir(id)
            .map_err(|e| io("making the workspace directory", e))?;
        let adopted = lot
            .claim(id, bytes)
            .map_err(|e| io("taking over the parked workspace", e))?;
        // Mounted there but not handed over (a process killed mid-step): remounted empty.
        let mounted = crate::parking::is_tmpfs_mount(&dir)
            .map_err(|e| io("inspecting the workspace directory", e))?;
        let mut t = Tmpfs {
            place: Place::Lot {
                lot,
                id: id.to_string(),
                dir,
                parked: false,
            },
            bytes,
            mounted,
            pristine: false,
        };
        if adopted.is_none() {
            t.fresh()?;
        }
        Ok((t, adopted))
    }

    fn path(&self) -> &Path {
        match &self.place {
            Place::Temp(dir) => dir.path(),
            Place::Lot { dir, .. } => dir,
        }
    }

    /// Refuses to change a workspace this backend parked: it belongs to the lot (a later
    /// process may take it over, or the lot evict it), and [`Backend::park`] says a
    /// backend that parked is dropped, not used again.
    fn not_parked(&self) -> Result<(), SessionError> {
        match &self.place {
            Place::Lot {
                id, parked: true, ..
            } => Err(SessionError::Backend(format!(
                "the workspace of {id} is parked: a new backend takes it over"
            ))),
            _ => Ok(()),
        }
    }

    /// Leaves the workspace mounted for a later process, standing at `at`; `true` when
    /// it did.
    fn park(&mut self, at: &Position) -> Result<bool, SessionError> {
        if let Place::Lot {
            lot, id, parked, ..
        } = &mut self.place
        {
            if self.mounted {
                lot.park(id, self.bytes, at).map_err(|e| {
                    SessionError::Backend(format!("parking the workspace of {id}: {e}"))
                })?;
                *parked = true;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The directory, to change what is in it.
    fn path_mut(&mut self) -> Result<PathBuf, SessionError> {
        self.not_parked()?;
        self.pristine = false;
        Ok(self.path().to_path_buf())
    }

    /// Mounts a new, empty tmpfs (dropping the previous one and everything in it).
    fn fresh(&mut self) -> Result<(), SessionError> {
        self.not_parked()?;
        if self.pristine {
            return Ok(());
        }
        self.unmount()?;
        let data = CString::new(format!("size={},mode=0700", self.bytes.max(4096)))
            .map_err(|e| SessionError::Backend(e.to_string()))?;
        rustix::mount::mount(
            "skillgate-session",
            self.path(),
            "tmpfs",
            MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
            data.as_c_str(),
        )
        .map_err(|e| {
            SessionError::Backend(format!(
                "mounting the session workspace (a tmpfs) on {}: {e} (the native backend needs \
                 root with CAP_SYS_ADMIN)",
                self.path().display()
            ))
        })?;
        self.mounted = true;
        self.pristine = true;
        Ok(())
    }

    fn unmount(&mut self) -> Result<(), SessionError> {
        if self.mounted {
            match rustix::mount::unmount(self.path(), UnmountFlags::DETACH) {
                // A parked workspace another process evicted meanwhile: not mounted.
                Ok(()) | Err(rustix::io::Errno::INVAL) => {}
                Err(e) => {
                    return Err(SessionError::Backend(format!(
                        "unmounting the session workspace {}: {e}",
                        self.path().display()
                    )));
                }
            }
            self.mounted = false;
        }
        Ok(())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        if !matches!(self.place, Place::Lot { parked: true, .. }) {
            let _ = self.unmount();
        }
    }
}

/// Gives the engine a step runs on, asked at every step: a long-running host (`serve`)
/// swaps its engine on reload, and a workspace it keeps warm must see the new policy.
pub type EngineProvider = Arc<dyn Fn() -> Arc<Engine> + Send + Sync>;

/// The native backend: one workspace, steps run by an [`Engine`] as one caller.
pub struct NativeBackend {
    engine: EngineProvider,
    caller: Caller,
    ws: Tmpfs,
    /// Where the parked workspace it was made with stands (until asked).
    adopted: Option<Position>,
}

impl std::fmt::Debug for NativeBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeBackend")
            .field("caller", &self.caller)
            .field("ws", &self.ws)
            .finish_non_exhaustive()
    }
}

impl NativeBackend {
    /// A backend with an empty workspace of at most `workspace_bytes`, running steps as
    /// `caller` through `engine`.
    pub fn new(
        engine: Arc<Engine>,
        caller: Caller,
        workspace_bytes: u64,
    ) -> Result<NativeBackend, SessionError> {
        NativeBackend::with_provider(Arc::new(move || engine.clone()), caller, workspace_bytes)
    }

    /// A backend like [`new`](Self::new) whose steps each run on the engine `engine`
    /// gives at that moment.
    pub fn with_provider(
        engine: EngineProvider,
        caller: Caller,
        workspace_bytes: u64,
    ) -> Result<NativeBackend, SessionError> {
        Ok(NativeBackend {
            engine,
            caller,
            ws: Tmpfs::new(workspace_bytes)?,
            adopted: None,
        })
    }

    /// A backend like [`with_provider`](Self::with_provider) whose workspace is session
    /// `session`'s slot in `lot`: the workspace an earlier process parked there (see
    /// [`Backend::adopted`]) or a new one, parked there again by [`Backend::park`].
    pub fn in_lot(
        engine: EngineProvider,
        caller: Caller,
        workspace_bytes: u64,
        lot: ParkingLot,
        session: &str,
    ) -> Result<NativeBackend, SessionError> {
        let (ws, adopted) = Tmpfs::in_lot(lot, session, workspace_bytes)?;
        Ok(NativeBackend {
            engine,
            caller,
            ws,
            adopted,
        })
    }

    /// The workspace's host directory, to read (it changes only through
    /// [`Backend::apply`] and [`Backend::materialize`]).
    pub fn root(&self) -> &Path {
        self.ws.path()
    }

    /// The workspace's host directory, to change it (a new one is no longer empty, a
    /// parked one is taken back).
    fn root_mut(&mut self) -> Result<PathBuf, SessionError> {
        self.ws.path_mut()
    }

    fn io(what: &str, e: std::io::Error) -> SessionError {
        SessionError::Backend(format!("{what}: {e}"))
    }

    async fn step(&mut self, spec: &StepSpec) -> Result<ExecOutcome, SessionError> {
        crate::paths::check_cwd(&spec.cwd).map_err(SessionError::Invalid)?;
        let root = self.root_mut()?;
        let created = crate::paths::make_dir(&root, &spec.cwd)
            .map_err(|e| Self::io("creating the step's working directory", e))?;
        let entry = match spec.language {
            Language::Python => "step.py",
            Language::JavaScript => "step.js",
            Language::Shell => "step.sh",
        };
        let mut skill =
            Skill::builder(STEP_SKILL, spec.language, spec.code.as_bytes().to_vec()).entry(entry);
        if let Some(runtime) = &spec.runtime {
            skill = skill.runtime(runtime);
        }
        let skill = skill.build();
        let engine = (self.engine)();
        let mut req = engine.request(self.caller.clone(), skill, spec.input.clone(), spec.limits);
        // On top of the sandbox's rebuilt environment (checked against the allow-list
        // before the step was accepted or replayed).
        req.spec
            .env
            .extend(spec.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        req.spec.workspace = Some(Workspace {
            host: root.clone(),
            cwd: spec.cwd.clone(),
        });
        let outcome = engine
            .run(req)
            .await
            .map_err(|e| SessionError::Backend(format!("running a step: {e}")))?;
        // A step that did not run leaves the workspace as it found it (it is not
        // recorded, so a replay would not make its working directory either).
        if let Some(dir) = created.filter(|_| !crate::sessions::ran(&outcome)) {
            std::fs::remove_dir_all(root.join(&dir)).map_err(|e| {
                Self::io(
                    "removing the working directory of a step that did not run",
                    e,
                )
            })?;
        }
        Ok(outcome)
    }
}

impl Backend for NativeBackend {
    fn capabilities(&self) -> BackendCapabilities {
        BackendCapabilities {
            name: "native".into(),
            pipeline: true,
            snapshots: true,
            workspace_bytes: self.ws.bytes,
        }
    }

    fn materialize(&mut self, from: Restore<'_>) -> Result<String, SessionError> {
        self.ws.fresh()?;
        match from {
            // Hashed while it is unpacked: the tree is not walked again.
            Restore::Snapshot(archive) => snapshot::unpack_digest(archive, &self.root_mut()?)
                .map_err(|e| Self::io("restoring a snapshot", e)),
            Restore::Empty => self.digest(),
        }
    }

    async fn apply<'a>(
        &'a mut self,
        action: Action<'a>,
    ) -> Result<Option<ExecOutcome>, SessionError> {
        match action {
            Action::Step(spec) => self.step(spec).await.map(Some),
            Action::Upload { path, bytes, mode } => {
                crate::paths::write(&self.root_mut()?, path, bytes, mode)
                    .map_err(|e| Self::io("writing an upload", e))?;
                Ok(None)
            }
            Action::Mount { skill, archive } => {
                let dir = format!("skills/{skill}");
                let root = self.root_mut()?;
                crate::paths::make_dir(&root, &dir).map_err(|e| Self::io("mounting a skill", e))?;
                snapshot::unpack(archive, &root.join(&dir))
                    .map_err(|e| Self::io("mounting a skill", e))?;
                Ok(None)
            }
        }
    }

    fn digest(&self) -> Result<String, SessionError> {
        snapshot::digest(self.root()).map_err(|e| Self::io("hashing the workspace", e))
    }

    fn snapshot(&self) -> Result<Packed, SessionError> {
        snapshot::pack(self.root()).map_err(|e| Self::io("packing the workspace", e))
    }

    fn read(&self, path: &str, cap: u64) -> Result<Option<Vec<u8>>, SessionError> {
        crate::paths::read(self.root(), path, cap).map_err(|e| Self::io("reading the workspace", e))
    }

    fn adopted(&mut self) -> Option<Position> {
        self.adopted.take()
    }

    fn park(&mut self, at: &Position) -> Result<bool, SessionError> {
        self.ws.park(at)
    }
}

/// The most bytes of a session workspace (its tmpfs) the front ends give by default.
pub const DEFAULT_WORKSPACE_BYTES: u64 = 512 * 1024 * 1024;

impl crate::Sessions<NativeBackend> {
    /// Sessions in `store` whose workspaces are [`NativeBackend`]s of `workspace_bytes`,
    /// each step run as the session's agent on the engine `engine` gives then: how the
    /// CLI (`skillgate session`) and `serve` drive sessions.
    pub fn native(
        store: Arc<dyn crate::LogStore>,
        settings: crate::Settings,
        engine: EngineProvider,
        workspace_bytes: u64,
    ) -> crate::Sessions<NativeBackend> {
        crate::Sessions::new(store, settings, move |s| {
            NativeBackend::with_provider(
                engine.clone(),
                Caller::new(&s.agent, &s.tenant),
                workspace_bytes,
            )
        })
    }

    /// Sessions like [`native`](Self::native) whose workspaces stay mounted in `lot`
    /// between processes: how the CLI, a process per step, keeps a session warm (see
    /// [`ParkingLot`]).
    pub fn native_parked(
        store: Arc<dyn crate::LogStore>,
        settings: crate::Settings,
        engine: EngineProvider,
        workspace_bytes: u64,
        lot: ParkingLot,
    ) -> crate::Sessions<NativeBackend> {
        crate::Sessions::new(store, settings, move |s| {
            NativeBackend::in_lot(
                engine.clone(),
                Caller::new(&s.agent, &s.tenant),
                workspace_bytes,
                lot.clone(),
                &s.id,
            )
        })
    }
}
