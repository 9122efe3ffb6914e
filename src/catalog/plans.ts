import type { components } from '../../generated/v1';

export type Plan = components['schemas']['Plan'];

/**
 * The hosting plans (GET /v1/plans). memory_mb and cpu_percent are the limits of the server's cgroup where the
 * host allows it, else the RSS watchdog's bound and a scheduling priority (src/runtime/host/local-environment.ts);
 * the heap flag follows memory_mb too. player_slots is the game's max players; backups how many a server keeps.
 */
export const plans: readonly Plan[] = [
  {
    id: 'micro',
    name: 'Micro',
    description: 'A test world or two friends.',
    memory_mb: 512,
    cpu_percent: 50,
    player_slots: 5,
    disk_mb: 2048,
    backups: 2,
  },
  {
    id: 'small',
    name: 'Small',
    description: 'A few friends on a vanilla world.',
    memory_mb: 1024,
    cpu_percent: 100,
    player_slots: 10,
    disk_mb: 5120,
    backups: 5,
  },
  {
    id: 'medium',
    name: 'Medium',
    description: 'A community server with room to grow.',
    memory_mb: 2048,
    cpu_percent: 200,
    player_slots: 25,
    disk_mb: 10240,
    backups: 10,
  },
  {
    id: 'large',
    name: 'Large',
    description: 'A busy server with many players online at once.',
    memory_mb: 4096,
    cpu_percent: 400,
    player_slots: 60,
    disk_mb: 20480,
    backups: 20,
  },
];
