// A Luanti server's UDP port, asked in the game's own protocol (test/runtime/luanti.test.ts, test/docker/luanti.test.ts).
import dgram from 'node:dgram';

/**
 * The Luanti protocol's first packet (a reliable, empty original packet from peer 0); true when the server answers
 * one of `tries` probes, each given timeoutMs (UDP: a busy server or Docker's port forwarding may drop one).
 */
export async function luantiAnswers(host: string, port: number, timeoutMs = 3000, tries = 3): Promise<boolean> {
  for (let i = 0; i < tries; i++) if (await probeOnce(host, port, timeoutMs)) return true;
  return false;
}

function probeOnce(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    const done = (answered: boolean) => {
      clearTimeout(timer);
      socket.close();
      resolve(answered);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('message', (reply) => {
      if (reply.readUInt32BE(0) !== 0x4f457403) return; // not the Luanti protocol id
      // The server gave us a peer id (SET_PEER_ID): say goodbye so no half-open peer is left.
      const peer = reply.length >= 14 ? reply.readUInt16BE(12) : 0;
      const disco = Buffer.from([0x4f, 0x45, 0x74, 0x03, peer >> 8, peer & 0xff, 0, 0, 3]);
      socket.send(disco, port, host, () => done(true));
    });
    socket.on('error', () => done(false));
    socket.send(Buffer.from('4f457403000000' + '03ffdc01', 'hex'), port, host);
  });
}
