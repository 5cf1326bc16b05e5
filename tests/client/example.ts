// A small typed frontend against the browser client's declarations (src/web/client.d.ts, served
// at /client.d.ts). scripts/conformance compiles it with the pinned tsc --noEmit: the
// declarations must parse, and a frontend written against them must type-check.
import { Turnhouse, TurnhouseError, type Json, type LobbyChange, type Room, type RoomVersion } from "../../src/web/client.js";

async function play(api: Turnhouse): Promise<Room> {
  const me = await api.signUp("alice");
  const token: string | null = api.token;
  console.log(me.id, me.username, token);

  const games = await api.games();
  const hosted = games.filter((game) => !game.builtin && game.hasFrontend);
  const example: Json | null = games[0]?.moveExample ?? null;
  console.log(hosted.map((game) => api.frontendUrl(game.id, game.version)), example);

  let room = await api.quickPlay("tictactoe");
  const stop = api.watch(room.id, (version: RoomVersion) => {
    console.log(version.version, version.kind, version.player?.username, version.state);
  }, { after: room.version });
  try {
    room = await api.move(room.id, { x: 1, y: 1 }, { ifMatch: room.version });
  } catch (err) {
    if (err instanceof TurnhouseError && err.code === "game_refused") {
      console.log(err.status, err.reason, err.detail, err.requestId);
    } else {
      throw err;
    }
  } finally {
    stop();
  }
  const page = await api.rooms({ game: "tictactoe", joinable: true, limit: 10 });
  const history = await api.history(room.id, { after: 0, limit: 50 });
  console.log(page.rooms.length, page.nextCursor, history.events.map((e) => e.kind), history.nextAfter);
  const stopLobby = api.watchLobby(null, (change: LobbyChange) => {
    if (change.change !== "resync") console.log(change.room.id);
  });
  stopLobby();
  const published = await api.publishGame("my-game", { source: "export default {}", frontend: null, moveExample: { column: 3 } });
  console.log(published.version, await api.gameSource("my-game", { version: 1 }));
  await api.createRoom({ game: "tictactoe", bot: "hard", botPlaysFirst: true });
  await api.join(room.id);
  await api.quit(room.id);
  return api.playAgain(room.id);
}

play(new Turnhouse("http://127.0.0.1:8080", { token: null })).catch(console.error);
