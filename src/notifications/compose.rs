//! The words of the mail a turn causes: the digest of the rooms waiting on a player, and the
//! warning of a clock running out. Made when sent, from the rooms as they are then.

use crate::domain::letters::{letter, Link};
use crate::domain::notices::Letter;
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;
use crate::store::Turn;

/// "Connect Four against bob": a room as a player names it.
pub fn room_title(game_name: &str, players: &[PlayerRef], me: &str) -> String {
    let others: Vec<&str> = players
        .iter()
        .filter(|p| p.id.as_str() != me)
        .map(|p| p.username.as_str())
        .collect();
    match others.is_empty() {
        true => game_name.to_owned(),
        false => format!("{game_name} against {}", others.join(", ")),
    }
}

/// The digest: every room in `turns` (each with its game's name), linked.
pub fn digest(
    public_url: &str,
    me: &str,
    turns: &[(Turn, String)],
    unsubscribe_url: &str,
) -> Letter {
    let count = turns.len();
    let subject = match count {
        1 => format!(
            "Your move: {}",
            room_title(&turns[0].1, &turns[0].0.players, me)
        ),
        n => format!("Your move in {n} games"),
    };
    let mut lines = vec![match count {
        1 => "A game is waiting for your move.".to_owned(),
        n => format!("{n} games are waiting for your move."),
    }];
    let titles: Vec<(String, String)> = turns
        .iter()
        .map(|(turn, name)| {
            let deadline = turn
                .deadline
                .map(|at| format!(" (move by {} UTC)", minute_of(at)))
                .unwrap_or_default();
            let title = format!("{}{deadline}", room_title(name, &turn.players, me));
            (title, format!("{public_url}/#/room/{}", turn.room))
        })
        .collect();
    let links: Vec<Link> = titles
        .iter()
        .map(|(label, url)| Link { label, url })
        .collect();
    lines.push("At most one such mail goes to you in a while, listing every game waiting.".into());
    letter(
        public_url,
        &subject,
        &lines,
        &links,
        &format!("You get it because you were away when it became your move. Stop this mail: {unsubscribe_url}"),
    )
}

/// The warning that the clock of `title` runs out at `deadline`.
pub fn clock_warning(
    public_url: &str,
    title: &str,
    room: &str,
    deadline: Timestamp,
    unsubscribe_url: &str,
) -> Letter {
    let url = format!("{public_url}/#/room/{room}");
    letter(
        public_url,
        &format!("Your clock runs out soon: {title}"),
        &[format!(
            "Your time to move in {title} runs out at {} UTC. If you do not move by then, the \
             game goes on without you, as its clock says.",
            minute_of(deadline)
        )],
        &[Link {
            label: "Make your move",
            url: &url,
        }],
        &format!("You get it because your clock in this game is running. Stop these warnings: {unsubscribe_url}"),
    )
}

/// `2026-11-28 14:05`.
fn minute_of(at: Timestamp) -> String {
    at.as_chrono().format("%Y-%m-%d %H:%M").to_string()
}
