//! The snapshot of every statement the store runs, as each database receives it:
//! `statements.sql` beside this file, rewritten by the test below. A change to any SQL shows
//! there, in review, as the final text; the test fails until the new snapshot is committed.

use super::dialect::{Dialect, SetSql};
use super::reads::MemberRange;
use super::types::RoomQuery;
use super::{
    batch, chat, chat_writes, emails, moderation, notices, outbox, postgres, profiles, push,
    ratings, reads, sessions, sqlite, turn_pushes, turns, webhook_endpoints, writer, writes,
};

/// How many rows a set statement is shown with.
const SHOWN_ROWS: usize = 2;

fn set_text<D: Dialect>(sql: SetSql) -> String {
    sql.text(SHOWN_ROWS, D::NUMBERED_PLACEHOLDERS)
}

/// The statements a dialect runs, by name: its own, then those both share.
fn statements<D: Dialect>() -> Vec<(String, String)> {
    let mut list = rooms::<D>();
    list.extend(accounts());
    list.extend(moderation());
    list.extend(standing::<D>());
    list.extend(catalog());
    list.extend(outbox_statements::<D>());
    list.extend(notice_statements::<D>());
    list.extend(chat_statements());
    list.push(("PLAYER_GAMES", reads::PLAYER_GAMES.into()));
    for (name, query, ranges) in listings() {
        let sql = reads::listing::<D>(&query, &ranges).sql().to_owned();
        list.push((name, sql));
    }
    list.into_iter().map(|(n, s)| (n.to_owned(), s)).collect()
}

/// The notices to players, and players' e-mail.
fn notice_statements<D: Dialect>() -> Vec<(&'static str, String)> {
    vec![
        ("INSERT_DIGESTS", set_text::<D>(notices::INSERT_DIGESTS)),
        (
            "INSERT_CLOCK_WARNINGS",
            set_text::<D>(notices::INSERT_CLOCK_WARNINGS),
        ),
        (
            "INSERT_TURN_PUSHES",
            set_text::<D>(turn_pushes::INSERT_TURN_PUSHES),
        ),
        ("MAKE_TURN_PUSHES", turn_pushes::MAKE_TURN_PUSHES.into()),
        ("DUE_TURN_PUSHES", turn_pushes::DUE_TURN_PUSHES.into()),
        ("DROP_TURN_PUSHES", turn_pushes::DROP_TURN_PUSHES.into()),
        (
            "TAKE_TURN_PUSHES",
            D::TAKE_TURN_PUSHES.unwrap_or("(in steps)").into(),
        ),
        ("NEXT_TURN_PUSH", turn_pushes::NEXT_TURN_PUSH.into()),
        ("INSERT_NOTICE", notices::INSERT_NOTICE.into()),
        (
            "INSERT_MAIL_TO_VERIFIED",
            notices::INSERT_MAIL_TO_VERIFIED.into(),
        ),
        ("CLAIM_NOTICES", D::CLAIM_NOTICES.into()),
        ("SETTLE_NOTICES", set_text::<D>(notices::SETTLE_NOTICES)),
        (
            "RELEASE_SOME_NOTICES",
            set_text::<D>(notices::RELEASE_SOME_NOTICES),
        ),
        ("DIGEST_MAILED", notices::DIGEST_MAILED.into()),
        ("DROP_SUBSCRIPTION", notices::DROP_SUBSCRIPTION.into()),
        ("PRUNE_NOTICES", notices::PRUNE_NOTICES.into()),
        ("RELEASE_NOTICES", notices::RELEASE_NOTICES.into()),
        ("DROP_PAST_TURNS", notices::DROP_PAST_TURNS.into()),
        ("EMAIL_OF", emails::EMAIL_OF.into()),
        ("PENDING_EMAIL", emails::PENDING_EMAIL.into()),
        ("EMAIL_TOKEN", emails::EMAIL_TOKEN.into()),
        ("RESET_ACCOUNT", emails::RESET_ACCOUNT.into()),
        ("DROP_TOKENS", emails::DROP_TOKENS.into()),
        ("INSERT_TOKEN", emails::INSERT_TOKEN.into()),
        ("USE_TOKEN", emails::USE_TOKEN.into()),
        ("PRUNE_TOKENS", emails::PRUNE_TOKENS.into()),
        ("ADDRESS_HOLDER", emails::ADDRESS_HOLDER.into()),
        ("SET_ADDRESS", emails::SET_ADDRESS.into()),
        ("DROP_ADDRESS", emails::DROP_ADDRESS.into()),
        ("SET_MAIL_SETTINGS", emails::SET_MAIL_SETTINGS.into()),
        ("MUTE_ROOM", emails::MUTE_ROOM.into()),
        ("UNMUTE_ROOM", emails::UNMUTE_ROOM.into()),
        ("MUTED_ROOMS", emails::MUTED_ROOMS.into()),
        ("DIGEST_ROOMS", emails::DIGEST_ROOMS.into()),
        ("DIGEST_MAILED_AT", emails::DIGEST_MAILED_AT.into()),
        ("INSERT_SERVER_KEY", emails::INSERT_SERVER_KEY.into()),
        ("SERVER_KEY", emails::SERVER_KEY.into()),
        ("UPSERT_SUBSCRIPTION", push::UPSERT_SUBSCRIPTION.into()),
        ("SUBSCRIPTION_COUNT", push::SUBSCRIPTION_COUNT.into()),
        ("SUBSCRIPTIONS_OF", push::SUBSCRIPTIONS_OF.into()),
        ("PUSH_TARGETS", set_text::<D>(push::PUSH_TARGETS)),
        ("REMOVE_SUBSCRIPTION", push::REMOVE_SUBSCRIPTION.into()),
    ]
}

/// Chat: messages, reports, blocks, mutes and closed galleries.
fn chat_statements() -> Vec<(&'static str, String)> {
    vec![
        ("INSERT_MESSAGE", chat_writes::INSERT_MESSAGE.into()),
        ("ROOM_MESSAGES_AFTER", chat::ROOM_MESSAGES_AFTER.into()),
        ("ROOM_STREAM_AFTER", chat::ROOM_STREAM_AFTER.into()),
        ("LAST_ROOM_MESSAGE", chat_writes::LAST_ROOM_MESSAGE.into()),
        ("LAST_LOBBY_MESSAGE", chat_writes::LAST_LOBBY_MESSAGE.into()),
        ("LOBBY_MESSAGES_AFTER", chat::LOBBY_MESSAGES_AFTER.into()),
        ("LOBBY_MESSAGES_BEFORE", chat::LOBBY_MESSAGES_BEFORE.into()),
        ("MESSAGE", chat::MESSAGE.into()),
        ("ROOM_CHAT", chat::ROOM_CHAT.into()),
        ("MUTED_UNTIL", chat::MUTED_UNTIL.into()),
        ("MUTE", chat_writes::MUTE.into()),
        ("DELETE_MESSAGE", chat_writes::DELETE_MESSAGE.into()),
        ("INSERT_REPORT", chat_writes::INSERT_REPORT.into()),
        ("OPEN_REPORTS", chat::OPEN_REPORTS.into()),
        ("BLOCK", chat_writes::BLOCK.into()),
        ("UNBLOCK", chat_writes::UNBLOCK.into()),
        ("BLOCKS_OF", chat::BLOCKS_OF.into()),
        ("CLOSE_GALLERY", chat_writes::CLOSE_GALLERY.into()),
    ]
}

/// Rooms: the writer's transactions, the room changes, and the reads of rooms.
fn rooms<D: Dialect>() -> Vec<(&'static str, String)> {
    vec![
        ("BEGIN", D::BEGIN.into()),
        ("COMMIT", writer::COMMIT.into()),
        ("ROLLBACK", writer::ROLLBACK.into()),
        ("OLDEST_OPEN_ROOM", D::OLDEST_OPEN_ROOM.into()),
        ("IDLE_WAITING_ROOMS", D::IDLE_WAITING_ROOMS.into()),
        ("INSERT_ROOMS", set_text::<D>(D::INSERT_ROOMS)),
        ("UPDATE_ROOMS", set_text::<D>(D::UPDATE_ROOMS)),
        (
            "UPDATE_LISTED_ROOMS",
            D::UPDATE_LISTED_ROOMS.map_or("(UPDATE_ROOMS)".into(), set_text::<D>),
        ),
        ("INSERT_EVENTS", set_text::<D>(D::INSERT_EVENTS)),
        ("UPSERT_MEMBERS", set_text::<D>(batch::UPSERT_MEMBERS)),
        (
            "SET_MEMBERS_FINISHED",
            set_text::<D>(batch::SET_MEMBERS_FINISHED),
        ),
        ("GAME_OWNER", D::GAME_OWNER.into()),
        ("COPY_ROOMS", D::COPY_ROOMS.into()),
        ("PING", reads::PING.into()),
        ("ONE_ROOM", reads::ONE_ROOM.into()),
        ("EVENTS_PAGE", reads::EVENTS_PAGE.into()),
        ("ACCOUNT", reads::ACCOUNT.into()),
        ("ACCOUNT_BY_NAME", reads::ACCOUNT_BY_NAME.into()),
        ("VERSIONS", reads::VERSIONS.into()),
        ("GAME_SOURCE", reads::GAME_SOURCE.into()),
        ("FRONTEND_FILE", reads::FRONTEND_FILE.into()),
        ("FRONTEND_FILE_GZIP", reads::FRONTEND_FILE_GZIP.into()),
        ("EARLIEST_DEADLINES", reads::EARLIEST_DEADLINES.into()),
        ("LAST_ACTIONS", reads::LAST_ACTIONS.into()),
    ]
}

/// Webhook endpoints and the outbox.
fn outbox_statements<D: Dialect>() -> Vec<(&'static str, String)> {
    vec![
        ("INSERT_OUTBOX", set_text::<D>(outbox::INSERT_OUTBOX)),
        ("SETTLE_OUTBOX", set_text::<D>(outbox::SETTLE_OUTBOX)),
        ("INSERT_ATTEMPTS", set_text::<D>(outbox::INSERT_ATTEMPTS)),
        ("CLAIM_OUTBOX", D::CLAIM_OUTBOX.into()),
        ("ENDPOINT", webhook_endpoints::ENDPOINT.into()),
        ("ENDPOINTS", webhook_endpoints::ENDPOINTS.into()),
        ("INSERT_ENDPOINT", webhook_endpoints::INSERT_ENDPOINT.into()),
        ("UPDATE_ENDPOINT", webhook_endpoints::UPDATE_ENDPOINT.into()),
        ("PAUSE_ENDPOINT", webhook_endpoints::PAUSE_ENDPOINT.into()),
        ("RESUME_ENDPOINT", webhook_endpoints::RESUME_ENDPOINT.into()),
        ("ROTATE_SECRET", webhook_endpoints::ROTATE_SECRET.into()),
        ("DELETE_ENDPOINT", webhook_endpoints::DELETE_ENDPOINT.into()),
        ("SUBSCRIBERS", outbox::SUBSCRIBERS.into()),
        ("SUBSCRIPTIONS", outbox::SUBSCRIPTIONS.into()),
        ("ENDPOINT_FAILING", outbox::ENDPOINT_FAILING.into()),
        ("ENDPOINT_ANSWERING", outbox::ENDPOINT_ANSWERING.into()),
        ("DISABLE_ENDPOINT", outbox::DISABLE_ENDPOINT.into()),
        ("DELIVERIES", webhook_endpoints::DELIVERIES.into()),
        ("DELIVERY", webhook_endpoints::DELIVERY.into()),
        ("OUTBOX_BACKLOG", webhook_endpoints::OUTBOX_BACKLOG.into()),
        ("ATTEMPTS", webhook_endpoints::ATTEMPTS.into()),
        ("REDELIVER", webhook_endpoints::REDELIVER.into()),
        ("PRUNE_OUTBOX", outbox::PRUNE_OUTBOX.into()),
        ("VERSIONS_OF", set_text::<D>(outbox::VERSIONS_OF)),
        ("RELEASE_CLAIMS", outbox::RELEASE_CLAIMS.into()),
        ("RELEASE_ROWS", set_text::<D>(outbox::RELEASE_ROWS)),
    ]
}

/// Players, sessions, sign-in codes and passwords.
fn accounts() -> Vec<(&'static str, String)> {
    vec![
        ("MARK_SEEN", writes::MARK_SEEN.into()),
        ("INSERT_ACCOUNT", writes::INSERT_ACCOUNT.into()),
        ("INSERT_BOT", writes::INSERT_BOT.into()),
        ("BOT_ACCOUNT", writes::BOT_ACCOUNT.into()),
        ("INSERT_SESSION", sessions::INSERT_SESSION.into()),
        ("SESSION", sessions::SESSION.into()),
        ("SESSIONS_OF", sessions::SESSIONS_OF.into()),
        ("END_SESSION", sessions::END_SESSION.into()),
        ("END_OTHER_SESSIONS", sessions::END_OTHER_SESSIONS.into()),
        ("END_ALL_SESSIONS", sessions::END_ALL_SESSIONS.into()),
        ("SET_SESSION_TOKEN", sessions::SET_SESSION_TOKEN.into()),
        ("MARK_SESSION_USED", sessions::MARK_SESSION_USED.into()),
        ("ENDED_SINCE", sessions::ENDED_SINCE.into()),
        ("INSERT_CODE", sessions::INSERT_CODE.into()),
        ("REDEEM_CODE", sessions::REDEEM_CODE.into()),
        ("PRUNE_CODES", sessions::PRUNE_CODES.into()),
        ("LIVE_CODES", sessions::LIVE_CODES.into()),
        ("SET_PASSWORD", sessions::SET_PASSWORD.into()),
        ("PASSWORD_BY_NAME", sessions::PASSWORD_BY_NAME.into()),
        ("PASSWORD_OF", sessions::PASSWORD_OF.into()),
    ]
}

/// Roles, suspensions, renames, unpublishing and the audit log.
fn moderation() -> Vec<(&'static str, String)> {
    vec![
        ("PLAYER_BY_NAME", moderation::PLAYER_BY_NAME.into()),
        ("PLAYER_BY_ID", moderation::PLAYER_BY_ID.into()),
        ("GRANT_ROLE", moderation::GRANT_ROLE.into()),
        ("REVOKE_ROLE", moderation::REVOKE_ROLE.into()),
        ("ROLES_OF", moderation::ROLES_OF.into()),
        ("SUSPEND", moderation::SUSPEND.into()),
        ("END_ALL_SESSIONS", moderation::END_ALL_SESSIONS.into()),
        ("UNSUSPEND", moderation::UNSUSPEND.into()),
        ("SUSPENSION", moderation::SUSPENSION.into()),
        ("PLAYER_RECORD", moderation::PLAYER_RECORD.into()),
        ("RENAME", moderation::RENAME.into()),
        ("UNPUBLISH", moderation::UNPUBLISH.into()),
        ("INSERT_AUDIT", moderation::INSERT_AUDIT.into()),
        ("AUDIT_PAGE", moderation::AUDIT_PAGE.into()),
        ("SEATS_OF", moderation::SEATS_OF.into()),
        (
            "UNFINISHED_ROOMS_OF_GAME",
            moderation::UNFINISHED_ROOMS_OF_GAME.into(),
        ),
    ]
}

/// Ratings, leaderboards and profiles.
fn standing<D: Dialect>() -> Vec<(&'static str, String)> {
    vec![
        ("RATINGS_OF", set_text::<D>(ratings::RATINGS_OF)),
        ("UPSERT_RATINGS", set_text::<D>(ratings::UPSERT_RATINGS)),
        (
            "INSERT_RATING_CHANGES",
            set_text::<D>(ratings::INSERT_RATING_CHANGES),
        ),
        ("CHANGES_IN", ratings::CHANGES_IN.into()),
        ("ALL_CHANGES", ratings::ALL_CHANGES.into()),
        ("LEADERBOARD_FIRST", ratings::LEADERBOARD_FIRST.into()),
        ("LEADERBOARD_AFTER", ratings::LEADERBOARD_AFTER.into()),
        ("SET_CHANGE", ratings::SET_CHANGE.into()),
        ("SET_RATING", ratings::SET_RATING.into()),
        ("PLAYER_RATINGS", profiles::PLAYER_RATINGS.into()),
        ("TURNS_OF", turns::TURNS_OF.into()),
        ("PLACES_ABOVE", profiles::PLACES_ABOVE.into()),
        ("ADD_TO_BANDS", set_text::<D>(ratings::ADD_TO_BANDS)),
        ("CLEAR_BANDS", ratings::CLEAR_BANDS.into()),
        (
            "CHANGES_OF_PLAYERS_IN",
            set_text::<D>(profiles::CHANGES_OF_PLAYERS_IN),
        ),
    ]
}

/// Uploaded games, their versions, pages and logs.
fn catalog() -> Vec<(&'static str, String)> {
    vec![
        ("INSERT_GAME", writes::INSERT_GAME.into()),
        ("INSERT_GAME_VERSION", writes::INSERT_GAME_VERSION.into()),
        ("COPY_FRONTEND_FILES", writes::COPY_FRONTEND_FILES.into()),
        ("INSERT_FRONTEND_FILE", writes::INSERT_FRONTEND_FILE.into()),
        ("LAST_ROOM_SEQ", writes::LAST_ROOM_SEQ.into()),
        ("COPY_MEMBERS", writes::COPY_MEMBERS.into()),
        ("COPY_EVENTS", writes::COPY_EVENTS.into()),
        ("INSERT_GAME_LOG", writes::INSERT_GAME_LOG.into()),
        ("TRIM_GAME_LOG", writes::TRIM_GAME_LOG.into()),
        ("GAME_LOG_AFTER", reads::GAME_LOG_AFTER.into()),
        ("GAME_LOG_NEWEST", reads::GAME_LOG_NEWEST.into()),
    ]
}

/// One listing of each shape `GET /rooms` can ask for, with the ranges of a player's
/// memberships it reads (for a player of two games, `g` and `h`, where it names no game).
fn listings() -> Vec<(&'static str, RoomQuery, Vec<MemberRange>)> {
    let query = |game: Option<&str>, player: Option<&str>, joinable, finished, private| RoomQuery {
        game: game.map(Into::into),
        player: player.map(Into::into),
        joinable,
        finished,
        include_private: private,
        before_seq: Some(1000),
        limit: 20,
    };
    let ranges = MemberRange::of_games;
    vec![
        (
            "LISTING (the lobby)",
            query(None, None, None, None, false),
            Vec::new(),
        ),
        (
            "LISTING (one game's open rooms)",
            query(Some("g"), None, Some(true), Some(false), false),
            Vec::new(),
        ),
        (
            "LISTING (my rooms of one game, finished)",
            query(Some("g"), Some("p"), None, Some(true), true),
            ranges(&[true], &["g"]),
        ),
        (
            "LISTING (someone's joinable rooms, of two games: two ranges merged)",
            query(None, Some("p"), Some(true), None, false),
            ranges(&[false], &["g", "h"]),
        ),
        (
            "LISTING (my rooms of two games, finished or not: four ranges merged)",
            query(None, Some("p"), None, None, true),
            ranges(&[false, true], &["g", "h"]),
        ),
        (
            "LISTING (my rooms, finished, of more games than are read as ranges: a walk)",
            query(None, Some("p"), None, Some(true), true),
            vec![MemberRange::new(true, None)],
        ),
    ]
}

fn snapshot() -> String {
    let mut out = String::from(
        "-- Every statement the store runs, as each database receives it (a set statement is\n\
         -- shown with two rows). Written by `cargo test --lib store::statements`: commit the\n\
         -- change with the code that made it.\n",
    );
    // A statement both databases receive as the same text is shown once.
    let sqlite = statements::<sqlx::Sqlite>();
    let postgres = statements::<sqlx::Postgres>();
    for ((name, lite), (_, pg)) in sqlite.iter().zip(&postgres) {
        if lite == pg {
            out.push_str(&format!("\n-- SQLite and PostgreSQL: {name}\n{lite};\n"));
        } else {
            out.push_str(&format!("\n-- SQLite: {name}\n{lite};\n"));
            out.push_str(&format!("\n-- PostgreSQL: {name}\n{pg};\n"));
        }
    }
    out.push_str(&format!("\n-- SQLite: BACKUP\n{};\n", sqlite::BACKUP));
    out.push_str(&format!(
        "\n-- PostgreSQL: QUICK_PLAY_LOCK\n{};\n",
        postgres::QUICK_PLAY_LOCK
    ));
    out.push_str(&format!(
        "\n-- PostgreSQL: RATINGS_LOCK\n{};\n",
        set_text::<sqlx::Postgres>(postgres::RATINGS_LOCK)
    ));
    out.push_str(&format!(
        "\n-- PostgreSQL: NOTIFY\n{};\n",
        set_text::<sqlx::Postgres>(postgres::NOTIFY)
    ));
    out.push_str(&format!(
        "\n-- PostgreSQL: SESSIONS_IN\n{};\n",
        set_text::<sqlx::Postgres>(sessions::SESSIONS_IN)
    ));
    for (name, statement) in [
        (
            "CHAT_LOCK",
            <sqlx::Postgres as super::dialect::Dialect>::CHAT_LOCK,
        ),
        (
            "CHAT_NOTIFY",
            <sqlx::Postgres as super::dialect::Dialect>::CHAT_NOTIFY,
        ),
    ] {
        let statement = statement.expect("PostgreSQL has it");
        out.push_str(&format!("\n-- PostgreSQL: {name}\n{statement};\n"));
    }
    out.push_str(&format!(
        "\n-- PostgreSQL: NOTIFY_PRESENCE\n{};\n",
        postgres::presence::NOTIFY_PRESENCE
    ));
    out
}

#[test]
fn the_snapshot_of_every_statement_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/statements.sql");
    let before = std::fs::read_to_string(&path).unwrap_or_default();
    let now = snapshot();
    if before != now {
        std::fs::write(&path, &now).expect("the snapshot can be written");
    }
    assert!(
        before == now,
        "the SQL changed: {} is rewritten; review it and commit it",
        path.display()
    );
}

#[test]
fn notifications_go_to_the_channel_listened_on() {
    assert!(postgres::NOTIFY
        .statement
        .contains(&format!("pg_notify('{}'", postgres::CHANNEL)));
}
