//! One step of a room's life: a working copy of the room that hooks are applied to, one
//! version and one event at a time, until it is committed or dropped.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Once};

use serde_json::Value;

use super::EngineError;
use crate::domain::ids::PlayerId;
use crate::domain::time::Timestamp;

use crate::domain::records::{
    AuditEntry, EventKind, LobbyChange, RatedResult, Rematch, Room, RoomEvent,
};
use crate::game::{
    winners_of, BoardGame, Game, Hook, HookError, PatchError, PlayerRef, ValidPatch,
};
use crate::store::RoomCommit;

pub struct Transition {
    game: Arc<dyn Game>,
    pub room: Room,
    expected_version: Option<i64>,
    events: Vec<RoomEvent>,
    members_changed: bool,
    /// What the lobby shows of the room as it was read (`None` for a new room).
    lobby_before: Option<LobbyView>,
    /// Whether the room was finished at the last version recorded (a game that finishes is
    /// counted in the score once).
    finished_before: bool,
    now: Timestamp,
    /// The admin action this step is, for the audit log (in the same commit).
    pub audit: Option<AuditEntry>,
    /// The rated game this step finishes, if it finishes one.
    rated_result: Option<RatedResult>,
    /// Who won the game this step finishes, if it finishes one and that is known.
    winners: Option<Vec<PlayerId>>,
    /// Who won, as the game said when its hook finished the room (for the version recorded
    /// next).
    verdict: Verdict,
    /// Whose move it was at the version read (see [`Room::to_move`]).
    to_move_before: Option<Vec<PlayerId>>,
}

/// Who won the game a hook just finished, as far as the game could say.
enum Verdict {
    /// No hook finished it: the platform reads the final state.
    Unasked,
    /// The game named these winners (none: a draw).
    Named(Vec<String>),
    /// The game failed to say (its `winners` export threw): the game is neither scored nor
    /// rated, and its author finds why in its logs.
    Unknown,
}

/// The soonest a timeout may set the next one after itself: a game that re-arms at "now" on
/// every timeout gets one `timeout` version per room per second, not a spin.
const TIMEOUT_SPACING: std::time::Duration = std::time::Duration::from_secs(1);

/// The part of a room a lobby list shows: whether it is open, over, and how full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct LobbyView {
    joinable: bool,
    finished: bool,
    seated: usize,
}

impl LobbyView {
    fn of(room: &Room) -> Self {
        Self {
            joinable: room.joinable,
            finished: room.finished,
            seated: room.players.len(),
        }
    }
}

impl Transition {
    /// Starts from a stored room (`expected_version` is its version) or a blank one (`None`).
    pub fn new(game: Arc<dyn Game>, room: Room, expected_version: Option<i64>) -> Self {
        Self {
            game,
            lobby_before: expected_version.map(|_| LobbyView::of(&room)),
            finished_before: room.finished,
            to_move_before: room.to_move.clone(),
            room,
            expected_version,
            events: Vec::new(),
            members_changed: expected_version.is_none(),
            now: Timestamp::now(),
            audit: None,
            rated_result: None,
            winners: None,
            verdict: Verdict::Unasked,
        }
    }

    /// The game whose hooks this step runs.
    pub fn game(&self) -> &dyn Game {
        self.game.as_ref()
    }

    /// Only current players may do what follows.
    pub fn require_player(&self, player_id: &str) -> Result<(), EngineError> {
        if self.room.is_player(player_id) {
            Ok(())
        } else {
            Err(EngineError::NotAPlayer)
        }
    }

    /// Seats a player at the end of `players` (a former player leaves `inactive_players`).
    pub fn add_player(&mut self, player: &PlayerRef) {
        self.room.inactive_players.retain(|p| p.id != player.id);
        Arc::make_mut(&mut self.room.players).push(player.clone());
        self.members_changed = true;
    }

    /// The rematch offer whose seats are still held now, if there is one.
    pub fn held_seats(&self) -> Option<&Rematch> {
        self.room
            .rematch
            .as_ref()
            .filter(|rematch| rematch.holds(self.now))
    }

    /// Holds `seats` for a rematch `by` asked for, for `hold` from now (nothing when there is
    /// no one to hold a seat for).
    pub fn hold_seats(&mut self, by: &PlayerRef, seats: Vec<PlayerRef>, hold: std::time::Duration) {
        self.room.rematch = (!seats.is_empty()).then(|| Rematch {
            by: by.clone(),
            seats,
            until: self.now.after(hold),
        });
    }

    /// The player's seat is no longer held: they took it, or turned it down.
    pub fn release_seat(&mut self, player_id: &str) {
        if let Some(rematch) = &mut self.room.rematch {
            rematch.seats.retain(|p| p.id != player_id);
            if rematch.seats.is_empty() {
                self.room.rematch = None;
            }
        }
    }

    /// Moves a current player to `inactive_players`.
    pub fn remove_player(&mut self, player_id: &str) {
        if let Some(index) = self.room.players.iter().position(|p| p.id == player_id) {
            let player = Arc::make_mut(&mut self.room.players).remove(index);
            self.make_inactive(player);
        }
    }

    /// Back to a room before any hook: every player inactive, no state, open, unfinished.
    pub fn restart(&mut self) {
        for player in Arc::unwrap_or_clone(std::mem::take(&mut self.room.players)) {
            self.make_inactive(player);
        }
        self.room.state = Arc::new(Value::Null);
        self.room.joinable = true;
        self.room.finished = false;
        self.room.trigger_timeout_at = None;
        self.members_changed = true;
    }

    /// Records a player who left as an inactive player (once, at the end of the list).
    fn make_inactive(&mut self, player: PlayerRef) {
        self.room.inactive_players.retain(|p| p.id != player.id);
        self.room.inactive_players.push(player);
        self.members_changed = true;
    }

    /// Runs the hook for `kind` on a copy of the room and applies its patch as a new version.
    pub fn run_hook(
        &mut self,
        kind: EventKind,
        player: &PlayerRef,
        mv: Option<&Arc<Value>>,
    ) -> Result<(), EngineError> {
        self.run(kind, Some(player), mv)
    }

    /// Whether the room's deadline has passed.
    pub fn deadline_passed(&self) -> bool {
        self.room
            .trigger_timeout_at
            .as_ref()
            .is_some_and(|at| *at <= self.now)
    }

    /// The deadline passed: it is used up, and `onTimeout` runs as a version of its own.
    pub fn run_timeout(&mut self) -> Result<(), EngineError> {
        self.room.trigger_timeout_at = None;
        self.run(EventKind::Timeout, None, None)
    }

    /// The deadline passed and `onTimeout` failed: the deadline is cleared, in a version that
    /// says so, so that a broken hook is not run again and again.
    pub fn clear_failed_timeout(&mut self) {
        self.room.trigger_timeout_at = None;
        self.record(EventKind::TimeoutFault, None, None);
    }

    fn run(
        &mut self,
        kind: EventKind,
        player: Option<&PlayerRef>,
        mv: Option<&Arc<Value>>,
    ) -> Result<(), EngineError> {
        // The hook is shown the working copy's own players and state, shared, not copied.
        let board = self.room.board_game(self.now);
        let patch = self.ask_hook(kind, player, mv.map(|mv| &**mv), &board)?;
        if let Some(state) = patch.state {
            self.room.state = Arc::new(state);
        }
        if let Some(joinable) = patch.joinable {
            self.room.joinable = joinable;
        }
        if let Some(finished) = patch.finished {
            self.room.finished = finished;
        }
        if let Some(deadline) = patch.trigger_timeout_at {
            self.room.trigger_timeout_at = match deadline {
                Some(at) if kind == EventKind::Timeout => {
                    Some(at.max(self.now.after(TIMEOUT_SPACING)))
                }
                other => other,
            };
        }
        if self.room.finished && !self.finished_before {
            self.verdict = self.ask_winners();
        }
        self.record(kind, player, mv);
        Ok(())
    }

    /// The patch of the hook for `kind` on `board`, checked: a refusal, a fault or an invalid
    /// patch is an error (a game's fault also goes to its logs).
    fn ask_hook(
        &self,
        kind: EventKind,
        player: Option<&PlayerRef>,
        mv: Option<&Value>,
        board: &BoardGame,
    ) -> Result<ValidPatch, EngineError> {
        let game = self.game.as_ref();
        let hook = hook_of(kind);
        let result = guarded(|| match (kind, player) {
            (EventKind::RoomStart | EventKind::Reset, Some(_)) => game.on_room_start(board),
            (EventKind::Join, Some(player)) => game.on_player_join(player, board),
            (EventKind::Quit | EventKind::Abandoned, Some(player)) => {
                game.on_player_quit(player, board)
            }
            (EventKind::Move, Some(player)) => {
                game.on_player_move(player, mv.unwrap_or(&Value::Null), board)
            }
            _ => game.on_timeout(board),
        });
        let patch = match result {
            Ok(patch) => patch,
            Err(HookError::Refused(refusal)) => return Err(EngineError::GameRefused(refusal)),
            Err(fault) => return Err(self.hook_failed(hook, board, fault)),
        };
        let invalid = |error: PatchError| {
            let error = EngineError::InvalidPatch { hook, error };
            game.log_fault(hook, board, &error.to_string());
            error
        };
        let patch = patch.validate().map_err(invalid)?;
        if matches!(patch.trigger_timeout_at, Some(Some(_))) && !game.capabilities().timeouts {
            return Err(invalid(PatchError::NoTimeoutHook));
        }
        Ok(patch)
    }

    /// Who won the room the last hook finished, as the game says (its `winners` export, or
    /// its state). A game failing to say is a fault of the game, kept in its logs; it does not
    /// hold the room (nor a player wanting to leave it) unfinished.
    fn ask_winners(&self) -> Verdict {
        let mut finished = self.room.board_game(self.now);
        finished.version += 1;
        let game = self.game.as_ref();
        match guarded(|| game.winners(&finished)) {
            Ok(winners) => Verdict::Named(winners),
            Err(fault) => {
                self.hook_failed(Hook::Winners, &finished, thrown_is_a_fault(fault));
                Verdict::Unknown
            }
        }
    }

    /// Whose move it is at the version just made, as the game says (its `toMove` export, or
    /// its state): only seated players, each once; nobody's in a finished room. A game failing
    /// to say is a fault of the game, kept in its logs, and the turn is unknown (`None`).
    fn ask_to_move(&self) -> Option<Vec<PlayerId>> {
        if self.room.finished {
            return Some(Vec::new());
        }
        let board = self.room.board_game(self.now);
        let game = self.game.as_ref();
        match guarded(|| game.to_move(&board)) {
            Ok(named) => {
                let mut to_move: Vec<PlayerId> = Vec::new();
                for id in named {
                    let seated = self.room.players.iter().find(|p| *p.id == *id);
                    if let Some(player) = seated.filter(|p| !to_move.contains(&p.id)) {
                        to_move.push(player.id.clone());
                    }
                }
                Some(to_move)
            }
            Err(fault) => {
                self.hook_failed(Hook::ToMove, &board, thrown_is_a_fault(fault));
                None
            }
        }
    }

    /// `hook` failed on `board` through no refusal: the error, in the server's log and, when
    /// the game's code is at fault, the game's.
    fn hook_failed(&self, hook: Hook, board: &BoardGame, fault: HookError) -> EngineError {
        tracing::error!(game = %self.room.game, room = %self.room.id, hook = hook.name(), error = %fault, "a game hook failed");
        let error = EngineError::from_hook_fault(hook, fault);
        if error.is_game_fault() {
            self.game.log_fault(hook, board, &error.to_string());
        }
        error
    }

    /// Adds a version for a change the platform made without a hook. A finished room is
    /// neither open nor timed.
    pub fn record(&mut self, kind: EventKind, player: Option<&PlayerRef>, mv: Option<&Arc<Value>>) {
        if self.room.finished {
            self.room.joinable = false;
            self.room.trigger_timeout_at = None;
            self.room.rematch = None;
            // A game that ends is counted once, and rated once; a room closed (unplayed, or by
            // an admin) is no game.
            let winners = match std::mem::replace(&mut self.verdict, Verdict::Unasked) {
                Verdict::Unasked => Some(winners_of(&self.room.state)),
                Verdict::Named(winners) => Some(winners),
                Verdict::Unknown => None,
            }
            .map(|winners| winners.into_iter().map(PlayerId::from).collect::<Vec<_>>());
            if let (false, true, Some(winners)) =
                (self.finished_before, kind != EventKind::Closed, winners)
            {
                self.room.score.count(&winners);
                self.winners = Some(winners.clone());
                if self.room.rated {
                    let mut players = Vec::clone(&self.room.players);
                    // One whose leaving ended the game played it too (and lost, most likely).
                    if let (EventKind::Quit | EventKind::Abandoned, Some(left)) = (kind, player) {
                        if !players.iter().any(|p| p.id == left.id) {
                            players.push(left.clone());
                        }
                    }
                    self.rated_result = Some(RatedResult {
                        version: self.room.version + 1,
                        players,
                        winners,
                    });
                }
            }
        }
        self.finished_before = self.room.finished;
        if self.held_seats().is_none() {
            self.room.rematch = None;
        }
        self.room.version += 1;
        self.room.updated_at = self.now;
        self.room.to_move = self.ask_to_move();
        self.events.push(RoomEvent {
            version: self.room.version,
            kind,
            player: player.cloned(),
            mv: mv.cloned(),
            state: self.room.state.clone(),
            joinable: self.room.joinable,
            finished: self.room.finished,
            players: self.room.players.clone(),
            trigger_timeout_at: self.room.trigger_timeout_at,
            to_move: self.room.to_move.clone(),
            created_at: self.now,
            rating_changes: Vec::new(),
        });
    }

    /// How the step changes the room for a lobby: `created`, `updated` (opened, filled,
    /// emptied or finished), or nothing a lobby shows.
    pub fn lobby_change(&self) -> Option<LobbyChange> {
        match self.lobby_before {
            None => Some(LobbyChange::Created),
            Some(before) if before != LobbyView::of(&self.room) => Some(LobbyChange::Updated),
            Some(_) => None,
        }
    }

    /// The step as a change for the store to write (boxed: it travels through futures and the
    /// writer's queue).
    pub fn into_commit(mut self) -> Box<RoomCommit> {
        self.room.turns = self.room.turns_after(self.room.updated_at);
        let listing_changed = self.lobby_before.is_none_or(|before| {
            (before.joinable, before.finished) != (self.room.joinable, self.room.finished)
        });
        let finished_changed = self
            .lobby_before
            .is_none_or(|before| before.finished != self.room.finished);
        let lobby_change = self.lobby_change();
        // A new room counts as joinable before: one that opens already full starts at once.
        let before = self
            .lobby_before
            .map_or((true, false), |b| (b.joinable, b.finished));
        Box::new(RoomCommit {
            joinable_before: before.0,
            finished_before: before.1,
            winners: self.winners,
            turns_begun: turns_begun(self.to_move_before.as_deref(), self.room.to_move.as_deref()),
            lobby_change,
            room: self.room,
            expected_version: self.expected_version,
            events: self.events,
            members_changed: self.members_changed,
            listing_changed,
            finished_changed,
            quick_play: None,
            audit: self.audit,
            rated_result: self.rated_result,
        })
    }
}

/// The players whose move it is in `after` and was not in `before`.
fn turns_begun(before: Option<&[PlayerId]>, after: Option<&[PlayerId]>) -> Vec<PlayerId> {
    let before = before.unwrap_or_default();
    (after.unwrap_or_default().iter())
        .filter(|p| !before.contains(p))
        .cloned()
        .collect()
}

/// A question to the game (who won, whose move) has no refusal: what it throws is a fault.
fn thrown_is_a_fault(fault: HookError) -> HookError {
    match fault {
        HookError::Refused(thrown) => HookError::Crashed(thrown.message),
        other => other,
    }
}

thread_local! {
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
}

/// Runs a game's hook, a panic in it becoming [`HookError::Crashed`] (and not printed).
pub(super) fn guarded<T>(hook: impl FnOnce() -> Result<T, HookError>) -> Result<T, HookError> {
    quiet_hook_panics();
    IN_HOOK.set(true);
    let outcome = catch_unwind(AssertUnwindSafe(hook));
    IN_HOOK.set(false);
    outcome.unwrap_or_else(|panic| {
        Err(HookError::Crashed(format!(
            "panicked: {}",
            panic_message(panic.as_ref())
        )))
    })
}

/// A panic inside a game hook is caught and logged by [`Transition::run_hook`]; this keeps the
/// default panic printer from also writing it to stderr. Every other panic is printed as usual.
fn quiet_hook_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_HOOK.get() {
                previous(info);
            }
        }));
    });
}

fn hook_of(kind: EventKind) -> Hook {
    match kind {
        EventKind::RoomStart | EventKind::Reset => Hook::RoomStart,
        EventKind::Join => Hook::PlayerJoin,
        EventKind::Quit | EventKind::Abandoned => Hook::PlayerQuit,
        EventKind::Move => Hook::PlayerMove,
        EventKind::Timeout | EventKind::TimeoutFault => Hook::Timeout,
        EventKind::Declined | EventKind::Closed | EventKind::Renamed => {
            unreachable!("the platform records these versions without running a hook")
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}
