'use strict';
// The flying-squid launcher's guard on player names (flying-squid-launcher.cjs; issue 39 §3).

// Minecraft's own rule for a player's name: 3 to 16 letters, digits and underscores (https://minecraft.wiki/w/Player#Username;
// openapi/v1.yaml PlayerName). Offline mode checks nothing, so flying-squid took any string its client sent: a
// name of 200 characters, or one with BEL, ESC, U+202E or a line break, which then went into its console lines
// (forging one), the service's players and events, and could be neither kicked nor banned (issue 39 §3). Such a
// client is refused while it logs in, before flying-squid sees it: told why, and never a player.
const PLAYER_NAME = /^[A-Za-z0-9_]{3,16}$/;

function refuseBadName(client) {
  const name = String(client.username);
  if (PLAYER_NAME.test(name)) return;
  client.gshRefused = true;
  // What it was, for the operator, as ASCII only: every other character as its code (so none reaches the console).
  const shown = name.slice(0, 40).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  console.log(`refused a player whose name Minecraft does not allow: "${shown}"${name.length > 40 ? ` (${name.length} characters)` : ''}`);
  client.end('Your name is not a valid Minecraft name: 3 to 16 letters, digits and underscores.');
}

// A refused client is ended, yet minecraft-protocol goes on to announce its login (and, before 1.20.2, its joining):
// neither reaches flying-squid, so it never becomes a player, is never logged by name and never reported.
function dropRefused(serv) {
  const server = serv._server;
  const emit = server.emit.bind(server);
  server.emit = (event, ...rest) => {
    if ((event === 'login' || event === 'playerJoin') && rest[0] && rest[0].gshRefused) return false;
    return emit(event, ...rest);
  };
}

module.exports = { refuseBadName, dropRefused };
