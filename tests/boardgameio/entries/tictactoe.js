import { hooks } from 'turnhouse-boardgameio/server';
import { TicTacToe } from '../games/tictactoe.js';

export default hooks(TicTacToe);
