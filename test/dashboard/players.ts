// Real Minecraft players (mineflayer) for the dashboard tests: one copy of joining and of ending every player a test
// made. A file calls playerBots() at its top level; its afterEach ends the players still connected.
import mineflayer from 'mineflayer';

export function playerBots() {
  /** The players still connected, oldest first. */
  const bots: mineflayer.Bot[] = [];
  /** How the players' connections ended, for a failure's message (waitOnPage's `also`). */
  const ends: string[] = [];
  afterEach(() => {
    for (const b of bots.splice(0)) b.end();
  });
  /** A player `username` joined to the game at `port` on loopback (offline mode), once it spawned. */
  function join(port: number, username: string): Promise<mineflayer.Bot> {
    const bot = mineflayer.createBot({ host: '127.0.0.1', port, username, auth: 'offline', version: '1.20' });
    bots.push(bot);
    bot.once('end', (reason) => {
      if (bots.includes(bot)) bots.splice(bots.indexOf(bot), 1); // ended by the game: nothing left to end
      ends.push(`${username}'s connection ended (${reason}) at ${new Date().toISOString()}`);
    });
    return new Promise((resolve, reject) => {
      bot.once('spawn', () => resolve(bot));
      bot.once('kicked', (why) => reject(new Error(`kicked: ${why}`)));
      bot.once('error', reject);
    });
  }
  return { bots, ends, join };
}
