import { hooks } from 'turnhouse-boardgameio/server';
import { Auction } from '../games/auction.js';

export default hooks(Auction);
