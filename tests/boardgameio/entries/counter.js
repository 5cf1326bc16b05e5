import { hooks } from 'turnhouse-boardgameio/server';
import { Counter } from '../games/counter.js';

export default hooks(Counter);
