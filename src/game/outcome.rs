//! Who won a finished game, read from its final state the way clients and bots read it: a
//! `winner` (a player, or a player's id) or a list of `winners`. A finished game that names
//! neither is a draw. And whose move it is in one in play, read from its state's
//! `plrToMoveIndex`, where UrTurn's games and the built-in ones keep it.

use serde_json::Value;

use super::PlayerRef;

/// The ids of the seated players `state` says are to move: the one at seat
/// `state.plrToMoveIndex`, if there is one; none otherwise, and none while the room is still
/// `joinable`: a game keeps that seat from its start (UrTurn's begin at 0), yet a room still
/// waiting for players waits on them, not on a move.
pub fn to_move_of(state: &Value, players: &[PlayerRef], joinable: bool) -> Vec<String> {
    if joinable {
        return Vec::new();
    }
    let seat = state.get("plrToMoveIndex").and_then(Value::as_u64);
    let player = seat.and_then(|seat| players.get(usize::try_from(seat).ok()?));
    player.map(|p| vec![p.id.to_string()]).unwrap_or_default()
}

/// The ids of the players `state` names as winners; empty for a draw.
pub fn winners_of(state: &Value) -> Vec<String> {
    match (state.get("winners"), state.get("winner")) {
        (Some(Value::Array(winners)), _) => player_ids(winners),
        (_, Some(winner)) => player_ids(std::slice::from_ref(winner)),
        _ => Vec::new(),
    }
}

/// The players in `list`, each a player (`{id, ...}`) or a player's id; anything else is
/// skipped.
pub fn player_ids(list: &[Value]) -> Vec<String> {
    let id = |value: &Value| match value {
        Value::String(id) => Some(id.clone()),
        Value::Object(player) => player.get("id").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    };
    list.iter().filter_map(id).collect()
}

#[cfg(test)]
mod tests {
    use super::{to_move_of, winners_of};
    use crate::game::PlayerRef;
    use serde_json::json;

    #[test]
    fn the_seat_to_move_names_its_player() {
        let player = |id: &str| PlayerRef {
            id: id.into(),
            username: id.to_uppercase(),
        };
        let players = [player("a"), player("b")];
        let to_move = |state| to_move_of(&state, &players, false);
        assert_eq!(to_move(json!({"plrToMoveIndex": 1})), ["b"]);
        assert!(to_move(json!({"plrToMoveIndex": 2})).is_empty());
        assert!(to_move(json!({"plrToMoveIndex": null})).is_empty());
        assert!(to_move(json!({"turn": 0})).is_empty());
        let waiting = to_move_of(&json!({"plrToMoveIndex": 0}), &players, true);
        assert!(waiting.is_empty(), "a room still waiting for players");
    }

    #[test]
    fn a_winner_is_a_player_an_id_or_one_of_a_list() {
        assert_eq!(
            winners_of(&json!({"winner": {"id": "a", "username": "alice"}})),
            ["a"]
        );
        assert_eq!(winners_of(&json!({"winner": "b"})), ["b"]);
        assert_eq!(
            winners_of(&json!({"winners": ["a", {"id": "c"}]})),
            ["a", "c"]
        );
        assert!(winners_of(&json!({"winner": null})).is_empty());
        assert!(winners_of(&json!([1, 2])).is_empty());
    }
}
