import { hooks } from 'turnhouse-boardgameio/server';
import { Cards } from '../games/cards.js';

export default hooks(Cards);
