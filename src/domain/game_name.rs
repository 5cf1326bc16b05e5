//! A game's name, as people read it in the lobby: it may not pass for another game's, nor hide
//! characters that make it read as something else.

/// Refuses `name` if it is one of the `reserved` games' (each by its id and its name, ignoring
/// case, spaces and punctuation), or holds control, invisible or bidirectional characters
/// (which can make a name read as another, or reorder the text around it). The message says
/// which.
pub fn check<'a>(
    name: &str,
    mut reserved: impl Iterator<Item = (&'a str, &'a str)>,
) -> Result<(), String> {
    if let Some(c) = name.chars().find(|&c| hidden_character(c)) {
        return Err(format!(
            "a game's name may not hold control, invisible or bidirectional characters \
             (it holds U+{:04X})",
            u32::from(c)
        ));
    }
    let folded = fold(name);
    match reserved.find(|(id, taken)| folded == fold(taken) || folded == fold(id)) {
        Some((id, _)) => Err(format!(
            "`{name}` is the name of the built-in game `{id}`; choose another"
        )),
        None => Ok(()),
    }
}

/// A name as a reader would confuse it with another: lower case, letters and digits only.
fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// A character that shows as nothing, or changes how the text around it is ordered.
fn hidden_character(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' // soft hyphen
            | '\u{034F}' // combining grapheme joiner
            | '\u{061C}' // Arabic letter mark
            | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' // Hangul fillers
            | '\u{180E}' // Mongolian vowel separator
            | '\u{200B}'..='\u{200F}' // zero-width spaces and joiners, LRM, RLM
            | '\u{202A}'..='\u{202E}' // embeddings and overrides
            | '\u{2060}'..='\u{206F}' // word joiner, invisible operators, isolates
            | '\u{FE00}'..='\u{FE0F}' // variation selectors
            | '\u{FEFF}' // zero-width no-break space
            | '\u{FFF9}'..='\u{FFFB}' // interlinear annotations
            | '\u{E0000}'..='\u{E007F}' // tags
        )
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn a_name_cannot_pass_for_a_reserved_game_or_hide_characters() {
        let reserved = [
            ("tictactoe", "Tic-tac-toe"),
            ("tictactoe3d", "3D tic-tac-toe"),
            ("battleship", "Battleship"),
        ];
        let checked = |name: &str| check(name, reserved.iter().copied());
        for taken in [
            "Tic-tac-toe",
            "TIC TAC TOE",
            "tictactoe",
            "Battleship!",
            "3D tic-tac-toe",
        ] {
            assert!(checked(taken).is_err(), "{taken}");
        }
        for hidden in [
            "Chess\u{202E}",
            "Go\u{200B}",
            "a\u{0007}b",
            "x\u{2066}y",
            "\u{FEFF}Go",
        ] {
            assert!(checked(hidden).is_err(), "{hidden:?}");
        }
        for fine in ["Connect Four", "Tic-tac-toe deluxe", "Échecs", "囲碁"] {
            assert!(checked(fine).is_ok(), "{fine}");
        }
    }
}
