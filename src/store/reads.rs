//! Every read the store makes, in SQL both databases accept: `$n` placeholders (SQLite binds
//! `$n` to the n-th argument too) and JSON columns read through `CAST(… AS TEXT)`, which is a
//! no-op on SQLite's text columns and turns PostgreSQL's `json`/`jsonb` into the same text.
//! Only the literals of a boolean differ (SQLite keeps flags as 0 and 1, and its partial
//! indexes are written with those literals), so the queries that test a flag take them as
//! arguments of a macro.

use sqlx::{Database, Encode, QueryBuilder, Type};

use super::RoomQuery;

/// Every room column of the room aliased `r`, named as [`super::rows::RoomRow`] expects.
macro_rules! room_columns {
    () => {
        "r.seq, r.id, r.game, r.game_version, r.private, r.version, r.joinable, r.finished, \
         CAST(r.state AS TEXT) AS state, CAST(r.players AS TEXT) AS players, \
         CAST(r.inactive_players AS TEXT) AS inactive_players, r.created_at, r.updated_at"
    };
}

/// `<room o> is open to <player>`: public, joinable, unfinished, and the player is not in it,
/// with the database's literals for false and true. Shaped for the partial index on public
/// rooms by game, joinable and finished, oldest first, with one primary-key probe of the
/// memberships per candidate (never a walk of everything the player was in).
macro_rules! open_to_player {
    ($game:literal, $player:literal, $no:literal, $yes:literal) => {
        concat!(
            "o.game = ",
            $game,
            " AND o.private = ",
            $no,
            " AND o.joinable = ",
            $yes,
            " AND o.finished = ",
            $no,
            " AND NOT EXISTS (SELECT 1 FROM room_players m WHERE m.room_id = o.id \
             AND m.player_id = ",
            $player,
            " AND m.active = ",
            $yes,
            ")"
        )
    };
}
pub(super) use open_to_player;

/// Quick play's search (`$1` the game, `$2` the player), with the database's boolean literals.
macro_rules! oldest_open_room {
    ($no:literal, $yes:literal) => {
        concat!(
            "SELECT o.id FROM rooms o WHERE ",
            $crate::store::reads::open_to_player!("$1", "$2", $no, $yes),
            " ORDER BY o.seq LIMIT 1"
        )
    };
}
pub(super) use oldest_open_room;

pub(super) const ONE_ROOM: &str =
    concat!("SELECT ", room_columns!(), " FROM rooms r WHERE r.id = $1");

/// A page of a room's history: `$1` the room, after version `$2`, at most `$3`.
pub(super) const EVENTS_PAGE: &str =
    "SELECT e.version, e.kind, e.player_id, p.username, CAST(e.move AS TEXT) AS move, \
     CAST(e.state AS TEXT) AS state, e.joinable, e.finished, CAST(e.players AS TEXT) AS players, \
     e.created_at FROM room_events e LEFT JOIN players p ON p.id = e.player_id \
     WHERE e.room_id = $1 AND e.version > $2 ORDER BY e.version LIMIT $3";

pub(super) const ACCOUNT: &str =
    "SELECT id, username, token_hash, created_at FROM players WHERE id = $1";

/// `SELECT <a version with its game's owner> FROM … <tail>`, as one static string.
macro_rules! select_versions {
    ($tail:literal) => {
        concat!(
            "SELECT v.game_id, v.version, v.name, v.description, v.min_players, v.max_players, \
             v.format, v.sha256, v.frontend IS NOT NULL AS has_frontend, v.move_example, \
             v.created_at, g.owner_id, p.username AS owner_name, \
             g.created_at AS game_created_at \
             FROM game_versions v JOIN games g ON g.id = v.game_id \
             JOIN players p ON p.id = g.owner_id ",
            $tail
        )
    };
}

pub(super) const LATEST_VERSIONS: &str = select_versions!(
    "WHERE v.version = (SELECT max(version) FROM game_versions WHERE game_id = v.game_id) \
     ORDER BY v.game_id"
);

/// Version `$2` of game `$1`, or its latest when `$2` is null.
pub(super) const ONE_VERSION: &str = select_versions!(
    "WHERE v.game_id = $1 AND v.version = coalesce($2, \
     (SELECT max(version) FROM game_versions WHERE game_id = $1))"
);

pub(super) const GAME_SOURCE: &str =
    "SELECT source FROM game_versions WHERE game_id = $1 AND version = $2";

pub(super) const GAME_FRONTEND: &str =
    "SELECT frontend FROM game_versions WHERE game_id = $1 AND version = $2";

/// The SQL for one listing, built for its filter set: only the filters given appear, as plain
/// equalities, so the planner can use the index made for exactly that set instead of scanning.
/// A player's rooms are read through their memberships, which carry each room's `seq`, game
/// and whether it is finished. (Two filters stay a walk, newest first: someone else's view of
/// a player's rooms skips the private ones, and `joinable=false` without `finished` skips the
/// joinable ones.) `no` is the database's literal for false.
pub(super) fn listing<DB>(query: &RoomQuery, no: &str) -> QueryBuilder<DB>
where
    DB: Database,
    for<'a> String: Encode<'a, DB> + Type<DB>,
    for<'a> bool: Encode<'a, DB> + Type<DB>,
    for<'a> i64: Encode<'a, DB> + Type<DB>,
{
    let mut sql = QueryBuilder::new(concat!("SELECT ", room_columns!()));
    let seq = match &query.player {
        Some(player) => {
            sql.push(
                " FROM room_players m JOIN rooms r ON r.seq = m.room_seq WHERE m.player_id = ",
            )
            .push_bind(player.clone());
            if let Some(game) = &query.game {
                sql.push(" AND m.game = ").push_bind(game.clone());
            }
            // A joinable room is never finished: "joinable" reads the unfinished range.
            let finished = match (query.finished, query.joinable) {
                (None, Some(true)) => Some(false),
                (finished, _) => finished,
            };
            if let Some(finished) = finished {
                sql.push(" AND m.finished = ").push_bind(finished);
            }
            if let Some(joinable) = query.joinable {
                sql.push(" AND r.joinable = ").push_bind(joinable);
            }
            if !query.include_private {
                sql.push(format_args!(" AND r.private = {no}"));
            }
            "m.room_seq"
        }
        None => {
            sql.push(format_args!(" FROM rooms r WHERE r.private = {no}"));
            if let Some(game) = &query.game {
                sql.push(" AND r.game = ").push_bind(game.clone());
            }
            if let Some(joinable) = query.joinable {
                sql.push(" AND r.joinable = ").push_bind(joinable);
            }
            if let Some(finished) = query.finished {
                sql.push(" AND r.finished = ").push_bind(finished);
            }
            "r.seq"
        }
    };
    if let Some(before) = query.before_seq {
        sql.push(format_args!(" AND {seq} < ")).push_bind(before);
    }
    sql.push(format_args!(" ORDER BY {seq} DESC LIMIT "))
        .push_bind(query.limit);
    sql
}

/// The read methods of one database's store, from the SQL above: `$store` has a `read` pool of
/// database `$db`, and `$no`/`$yes` are that database's literals for false and true.
macro_rules! impl_reads {
    ($store:ty, $db:ty, $no:literal, $yes:literal) => {
        impl $store {
            pub(in crate::store) async fn ping(&self) -> Result<(), StoreError> {
                sqlx::query("SELECT 1").execute(&self.read).await?;
                Ok(())
            }

            pub(in crate::store) async fn room(
                &self,
                id: &str,
            ) -> Result<Option<crate::model::Room>, StoreError> {
                let row: Option<$crate::store::rows::RoomRow> =
                    sqlx::query_as($crate::store::reads::ONE_ROOM)
                        .bind(id)
                        .fetch_optional(&self.read)
                        .await?;
                Ok(row
                    .map(|row| row.into_room())
                    .transpose()?
                    .map(|(_, room)| room))
            }

            pub(in crate::store) async fn oldest_open_room(
                &self,
                game: &str,
                player_id: &str,
            ) -> Result<Option<String>, StoreError> {
                Ok(
                    sqlx::query_scalar($crate::store::reads::oldest_open_room!($no, $yes))
                        .bind(game)
                        .bind(player_id)
                        .fetch_optional(&self.read)
                        .await?,
                )
            }

            pub(in crate::store) async fn rooms(
                &self,
                query: &$crate::store::RoomQuery,
            ) -> Result<Vec<(i64, crate::model::Room)>, StoreError> {
                let rows: Vec<$crate::store::rows::RoomRow> =
                    $crate::store::reads::listing::<$db>(query, $no)
                        .build_query_as()
                        .fetch_all(&self.read)
                        .await?;
                rows.into_iter().map(|row| row.into_room()).collect()
            }

            pub(in crate::store) async fn events(
                &self,
                room_id: &str,
                after: i64,
                limit: i64,
            ) -> Result<Vec<crate::model::RoomEvent>, StoreError> {
                let rows: Vec<$crate::store::rows::EventRow> =
                    sqlx::query_as($crate::store::reads::EVENTS_PAGE)
                        .bind(room_id)
                        .bind(after)
                        .bind(limit)
                        .fetch_all(&self.read)
                        .await?;
                rows.into_iter().map(|row| row.into_event()).collect()
            }

            pub(in crate::store) async fn account(
                &self,
                id: &str,
            ) -> Result<Option<crate::model::Account>, StoreError> {
                let row: Option<$crate::store::rows::AccountRow> =
                    sqlx::query_as($crate::store::reads::ACCOUNT)
                        .bind(id)
                        .fetch_optional(&self.read)
                        .await?;
                Ok(row.map(Into::into))
            }

            pub(in crate::store) async fn latest_game_versions(
                &self,
            ) -> Result<Vec<crate::model::GameVersionRecord>, StoreError> {
                let rows: Vec<$crate::store::rows::VersionRow> =
                    sqlx::query_as($crate::store::reads::LATEST_VERSIONS)
                        .fetch_all(&self.read)
                        .await?;
                Ok(rows.into_iter().map(Into::into).collect())
            }

            pub(in crate::store) async fn game_version(
                &self,
                game_id: &str,
                version: Option<i64>,
            ) -> Result<Option<crate::model::GameVersionRecord>, StoreError> {
                let row: Option<$crate::store::rows::VersionRow> =
                    sqlx::query_as($crate::store::reads::ONE_VERSION)
                        .bind(game_id)
                        .bind(version)
                        .fetch_optional(&self.read)
                        .await?;
                Ok(row.map(Into::into))
            }

            pub(in crate::store) async fn game_source(
                &self,
                game_id: &str,
                version: i64,
            ) -> Result<Option<String>, StoreError> {
                Ok(sqlx::query_scalar($crate::store::reads::GAME_SOURCE)
                    .bind(game_id)
                    .bind(version)
                    .fetch_optional(&self.read)
                    .await?)
            }

            pub(in crate::store) async fn game_frontend(
                &self,
                game_id: &str,
                version: i64,
            ) -> Result<Option<String>, StoreError> {
                let frontend: Option<Option<String>> =
                    sqlx::query_scalar($crate::store::reads::GAME_FRONTEND)
                        .bind(game_id)
                        .bind(version)
                        .fetch_optional(&self.read)
                        .await?;
                Ok(frontend.flatten())
            }
        }
    };
}
pub(super) use impl_reads;
