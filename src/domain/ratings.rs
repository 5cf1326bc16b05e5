//! Ratings: a player's standing in one game, and how one finished game changes it. The maths is
//! `skillratings`': Glicko-2 for two players; for more, Weng-Lin (each player a team of one,
//! the winners ranked first and the others tied behind them), on Glicko-2's scale so that one
//! game keeps one rating per player however many sit at its tables.

use skillratings::glicko2::{glicko2, Glicko2Config, Glicko2Rating};
use skillratings::weng_lin::{weng_lin_multi_team, WengLinConfig, WengLinRating};
use skillratings::{MultiTeamOutcome, Outcomes};

/// Glicko-2's points per Weng-Lin point: a new player's deviation (350) over Weng-Lin's
/// starting uncertainty (25/3), so both start at the same place.
const POINTS_PER_WENG_LIN: f64 = 350.0 / (25.0 / 3.0);
/// Weng-Lin's starting rating, which maps to Glicko-2's 1500.
const WENG_LIN_START: f64 = 25.0;
const GLICKO2_START: f64 = 1500.0;

/// A player's rating in one game.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    pub rating: f64,
    pub deviation: f64,
    pub volatility: f64,
    /// Rated games it counts.
    pub games: i64,
}

impl Default for Rating {
    /// Where every player starts.
    fn default() -> Self {
        let start = Glicko2Rating::new();
        Self {
            rating: start.rating,
            deviation: start.deviation,
            volatility: start.volatility,
            games: 0,
        }
    }
}

/// Rated games a player needs to be placed on a game's leaderboard.
pub const RANKED_AFTER_GAMES: i64 = 5;

/// The width, in points of conservative rating, of the bands a leaderboard's places are
/// counted in (so a rank is found by summing bands, not by counting every place above).
pub const BAND_POINTS: f64 = 5.0;

/// The band a conservative rating falls in: `[band * BAND_POINTS, (band + 1) * BAND_POINTS)`.
pub fn band_of(conservative: f64) -> i64 {
    (conservative / BAND_POINTS).floor() as i64
}

impl Rating {
    /// The rating less twice its deviation: what leaderboards rank by, so that a player with
    /// few games is not placed above one whose rating is known.
    pub fn conservative(&self) -> f64 {
        self.rating - 2.0 * self.deviation
    }

    /// Whether it counts games enough to be placed on the leaderboard.
    pub fn ranked(&self) -> bool {
        self.games >= RANKED_AFTER_GAMES
    }

    fn glicko2(&self) -> Glicko2Rating {
        Glicko2Rating {
            rating: self.rating,
            deviation: self.deviation,
            volatility: self.volatility,
        }
    }

    fn weng_lin(&self) -> WengLinRating {
        WengLinRating {
            rating: WENG_LIN_START + (self.rating - GLICKO2_START) / POINTS_PER_WENG_LIN,
            uncertainty: self.deviation / POINTS_PER_WENG_LIN,
        }
    }

    fn after_glicko2(&self, new: Glicko2Rating) -> Self {
        Self {
            rating: new.rating,
            deviation: new.deviation,
            volatility: new.volatility,
            games: self.games + 1,
        }
    }

    fn after_weng_lin(&self, new: &WengLinRating) -> Self {
        Self {
            rating: GLICKO2_START + (new.rating - WENG_LIN_START) * POINTS_PER_WENG_LIN,
            deviation: new.uncertainty * POINTS_PER_WENG_LIN,
            volatility: self.volatility,
            games: self.games + 1,
        }
    }
}

/// The ratings of `players` (each with their rating before) after one finished game that
/// `winners` won (none: a draw), in the same order. Fewer than two players: nothing changes.
pub fn after_game<W: AsRef<str>>(players: &[(&str, Rating)], winners: &[W]) -> Vec<Rating> {
    let won = |id: &str| winners.iter().any(|w| w.as_ref() == id);
    match players {
        [] | [_] => players.iter().map(|(_, r)| *r).collect(),
        [(one, a), (two, b)] => {
            let outcome = match (won(one), won(two)) {
                (true, false) => Outcomes::WIN,
                (false, true) => Outcomes::LOSS,
                _ => Outcomes::DRAW,
            };
            let (x, y) = glicko2(&a.glicko2(), &b.glicko2(), &outcome, &Glicko2Config::new());
            vec![a.after_glicko2(x), b.after_glicko2(y)]
        }
        _ => {
            let teams: Vec<[WengLinRating; 1]> =
                players.iter().map(|(_, r)| [r.weng_lin()]).collect();
            // Winners first, everyone else tied behind them; a draw ties everyone.
            let ranked: Vec<(&[WengLinRating], MultiTeamOutcome)> = players
                .iter()
                .zip(&teams)
                .map(|((id, _), team)| {
                    let rank = if won(id) || winners.is_empty() { 1 } else { 2 };
                    (&team[..], MultiTeamOutcome::new(rank))
                })
                .collect();
            let after = weng_lin_multi_team(&ranked, &WengLinConfig::new());
            players
                .iter()
                .zip(after)
                .map(|((_, before), team)| before.after_weng_lin(&team[0]))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn two_players_move_apart_by_glicko2_and_a_draw_leaves_equals_level() {
        let new = Rating::default();
        let after = after_game(&[("a", new), ("b", new)], &ids(&["a"]));
        assert!(after[0].rating > 1500.0 && after[1].rating < 1500.0);
        assert!((after[0].rating - 1500.0 + after[1].rating - 1500.0).abs() < 1e-6);
        assert!(after[0].deviation < 350.0);
        assert_eq!((after[0].games, after[1].games), (1, 1));
        let drawn = after_game(&[("a", new), ("b", new)], &[] as &[&str]);
        assert!((drawn[0].rating - 1500.0).abs() < 1e-6);
        assert!(drawn[0].deviation < 350.0);
        // The same as skillratings gives directly.
        let (x, _) = glicko2(
            &Glicko2Rating::new(),
            &Glicko2Rating::new(),
            &Outcomes::WIN,
            &Glicko2Config::new(),
        );
        assert_eq!(after[0].rating, x.rating);
    }

    #[test]
    fn more_players_are_ranked_winners_first_on_the_same_scale() {
        let new = Rating::default();
        let after = after_game(&[("a", new), ("b", new), ("c", new)], &ids(&["b"]));
        assert!(after[1].rating > 1500.0, "{after:?}");
        assert!(after[0].rating < 1500.0 && after[2].rating < 1500.0);
        assert!(
            (after[0].rating - after[2].rating).abs() < 1e-9,
            "the losers tie"
        );
        assert!(after.iter().all(|r| r.deviation < 350.0 && r.games == 1));
        assert_eq!(
            new.weng_lin().rating,
            WengLinRating::new().rating,
            "a new player starts where Weng-Lin starts"
        );
    }

    #[test]
    fn one_player_alone_is_not_rated() {
        let new = Rating::default();
        assert_eq!(after_game(&[("a", new)], &ids(&["a"])), vec![new]);
        assert_eq!(new.conservative(), 1500.0 - 700.0);
    }
}
