//! Who won a finished game, read from its final state the way clients and bots read it: a
//! `winner` (a player, or a player's id) or a list of `winners`. A finished game that names
//! neither is a draw.

use serde_json::Value;

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
    use super::winners_of;
    use serde_json::json;

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
