import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';

export interface StartupFacts {
  config: Config;
  /** Where the main listener and (if any) the METRICS_PORT listener ended up (PORT=0 picks a free port). */
  address: AddressInfo;
  metricsAddress?: AddressInfo;
  /** Accounts that can sign in to the dashboard. */
  dashboardUsers: number;
  /** `process.version`. */
  node: string;
}

/**
 * The one short block `npm start` prints once it listens (README "Set up on a fresh machine"): where the dashboard
 * and the docs are, where the data lives, the exact command for the first account while there is none, and what
 * the service runs on. Plain text for a person; the JSON log lines stay for machines.
 */
export function startupBlock(f: StartupFacts): string {
  const base = `http://${urlHost(f.config, f.address)}:${f.address.port}`;
  const lines = [
    `gsh is running on Node ${f.node} (${runtimeWords(f.config)}).`,
    `  dashboard  ${base}/`,
    `  API docs   ${base}/docs`,
    `  data       ${f.config.dataDir}`,
  ];
  if (f.metricsAddress) lines.push(`  metrics    http://${hostOf(f.metricsAddress.address)}:${f.metricsAddress.port}/metrics`);
  else if (f.config.prometheus.token) lines.push(`  metrics    ${base}/metrics (Authorization: Bearer $METRICS_TOKEN)`);
  if (f.dashboardUsers === 0) {
    const env = f.config.dataDir === defaultDataDir() ? '' : `DATA_DIR=${shellQuote(f.config.dataDir)} `;
    lines.push(
      'No dashboard account yet. Create the first one (in another terminal, from this folder):',
      `  ${env}npx gsh user create --email you@example.com --password '<8 or more characters>'`,
    );
  }
  return `${lines.join('\n')}\n`;
}

function runtimeWords(config: Config): string {
  return config.runtime === 'docker'
    ? `game servers in Docker containers, engine ${config.dockerHost} unless nodes are added`
    : 'game servers as local processes';
}

/** A name a browser on this host can open: the listener's own address, or localhost for a wildcard one. */
function urlHost(config: Config, address: AddressInfo): string {
  if (address.address === '0.0.0.0' || address.address === '::') return config.allowedHosts[0] ?? 'localhost';
  return hostOf(address.address);
}

function hostOf(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

function defaultDataDir(): string {
  return path.resolve('data'); // config.ts's default
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`;
}
