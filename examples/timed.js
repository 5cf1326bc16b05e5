// A game that keeps time as its moves say, for trying out deadlines (and for the tests and
// benchmarks of them). One seat is enough.
//   {"arm": ms}      sets a deadline ms from now
//   {"at": time}     sets it to time, as given (an RFC 3339 string; null clears it)
//   {"clear": true}  counts a move and clears the deadline
//   {"mode": m}      what onTimeout does: "count" (the default), "finish" the room,
//                    "rearm" at now, or "loop" forever (a fault: the deadline is cleared)
//   anything else    counts a move; the deadline stays as it was
const counted = (room, extra) => ({ ...room.state, moves: room.state.moves + 1, ...extra });
module.exports = {
  onRoomStart: () => ({ state: { moves: 0, timeouts: 0, mode: 'count' } }),
  onPlayerJoin: () => ({}),
  onPlayerQuit: () => ({}),
  onPlayerMove: (player, move, room) => {
    if (move.arm !== undefined) return { triggerTimeoutAt: new Date(Date.now() + move.arm) };
    if (move.at !== undefined) return { triggerTimeoutAt: move.at };
    if (move.mode !== undefined) return { state: { ...room.state, mode: move.mode } };
    if (move.clear) return { state: counted(room), triggerTimeoutAt: null };
    return { state: counted(room) };
  },
  onTimeout: (room) => {
    const state = { ...room.state, timeouts: room.state.timeouts + 1 };
    if (state.mode === 'loop') { for (;;) {} }
    if (state.mode === 'rearm') return { state, triggerTimeoutAt: new Date() };
    if (state.mode === 'finish') return { state, finished: true };
    return { state };
  },
};
