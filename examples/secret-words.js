// A game of hidden information, small enough to read at a glance. Each player is dealt a
// secret word on joining; only they see it (onPlayerView), until the game ends. A move
// {"say": "..."} is said to everyone; {"end": true} ends the game, and then every word shows.
module.exports = {
  onRoomStart: () => ({ state: { words: {}, said: [] } }),
  onPlayerJoin: (player, room) => {
    const word = 'secret-' + Math.random().toString(36).slice(2, 10);
    return { state: { ...room.state, words: { ...room.state.words, [player.id]: word } } };
  },
  onPlayerQuit: () => ({}),
  onPlayerMove: (player, move, room) => {
    if (move.end) return { finished: true };
    const said = [...room.state.said, { by: player.username, text: String(move.say) }];
    return { state: { ...room.state, said } };
  },
  onPlayerView: (viewer, room) => {
    if (room.finished) return room.state;
    const words = {};
    for (const [id, word] of Object.entries(room.state.words)) {
      words[id] = viewer && viewer.id === id ? word : 'hidden';
    }
    return { ...room.state, words };
  },
};
