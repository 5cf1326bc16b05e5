// A game page written as an UrTurn author writes one: React, and nothing but @urturn/client to
// reach the platform. It draws tic-tac-toe when the state has a board, and every state as
// JSON, so the tests can play through it and read what each seat was shown.
import React, { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import client, { events } from '@urturn/client';

function statusOf(roomState, me) {
  const { players = [], finished, state } = roomState;
  if (!state || !state.board) return 'Waiting for the room…';
  if (finished) {
    if (!state.winner) return "It's a tie!";
    return me && state.winner.id === me.id ? 'You won!' : `${state.winner.username} won`;
  }
  if (state.status === 'preGame') return 'Waiting for another player…';
  const toMove = players[state.plrToMoveIndex];
  if (toMove && me && toMove.id === me.id) return 'Your turn';
  return `Waiting for ${toMove ? toMove.username : 'the other player'}`;
}

function App() {
  const [roomState, setRoomState] = useState(client.getRoomState() || {});
  const [me, setMe] = useState(null);
  const [result, setResult] = useState(null);
  const [clock, setClock] = useState('');
  useEffect(() => {
    events.on('stateChanged', setRoomState);
    client.getLocalPlayer().then(setMe);
    const timer = setInterval(() => setClock(String(Math.round(client.now() - Date.now()))), 500);
    return () => { events.off('stateChanged', setRoomState); clearInterval(timer); };
  }, []);
  const board = roomState.state && roomState.state.board;
  return (
    <main>
      <img src="./static/media/logo.svg" alt="" width="32" height="32" />
      <h1>Tic-tac-toe through @urturn/client</h1>
      <p id="me" data-id={me ? me.id : ''}>{me ? me.username : 'nobody yet'}</p>
      <p id="status">{statusOf(roomState, me)}</p>
      <p id="version">{roomState.version ?? ''}</p>
      <p id="inline">{window.inlineScriptRan ? 'inline ran' : 'no inline'}</p>
      <p id="clock">{clock}</p>
      {board && (
        <div className="board">
          {board.map((row, x) => row.map((mark, y) => (
            <button
              type="button"
              key={`${x},${y}`}
              data-cell={`${x},${y}`}
              onClick={async () => setResult(await client.makeMove({ x, y }))}
            >
              {mark || ''}
            </button>
          )))}
        </div>
      )}
      <pre id="result">{result ? JSON.stringify(result) : ''}</pre>
      <pre id="room">{JSON.stringify(roomState)}</pre>
    </main>
  );
}

createRoot(document.getElementById('root')).render(<App />);
