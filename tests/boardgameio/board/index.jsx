// A boardgame.io React board as its tutorial writes it, played in a Turnhouse page's frame.
// The only line that names Turnhouse is `multiplayer:`; the page tells the frame which match
// and which seat it shows in its address (?matchID=…&playerID=…).
import React from 'react';
import { createRoot } from 'react-dom/client';
import { Client } from 'boardgame.io/react';
import { Turnhouse } from 'turnhouse-boardgameio/client';
import { TicTacToe } from '../games/tictactoe.js';

function TicTacToeBoard({ ctx, G, moves, playerID, isActive }) {
  const onClick = (id) => moves.clickCell(id);
  let winner = '';
  if (ctx.gameover) {
    winner = ctx.gameover.winner !== undefined
      ? <div id="winner">Winner: {ctx.gameover.winner}</div>
      : <div id="winner">Draw!</div>;
  }
  const cellStyle = { border: '1px solid #555', width: '50px', height: '50px', lineHeight: '50px', textAlign: 'center' };
  const tbody = [];
  for (let i = 0; i < 3; i++) {
    const cells = [];
    for (let j = 0; j < 3; j++) {
      const id = 3 * i + j;
      cells.push(
        <td key={id} data-cell={id}>
          {G.cells[id] ? <div style={cellStyle}>{G.cells[id]}</div>
            : <button style={cellStyle} onClick={() => onClick(id)} />}
        </td>,
      );
    }
    tbody.push(<tr key={i}>{cells}</tr>);
  }
  return (
    <div>
      <p id="seat">{playerID === null ? 'watching' : `player ${playerID}`}</p>
      <p id="turn">{isActive ? 'your turn' : 'waiting'}</p>
      <table id="board"><tbody>{tbody}</tbody></table>
      {winner}
    </div>
  );
}

const TicTacToeClient = Client({
  game: TicTacToe,
  board: TicTacToeBoard,
  multiplayer: Turnhouse(),
});

const params = new URLSearchParams(window.location.search);
createRoot(document.getElementById('root')).render(
  <TicTacToeClient matchID={params.get('matchID')} playerID={params.get('playerID')} />,
);
