// The transport a server's game speaks on its port (Address.transport in openapi/v1.yaml), from its software
// definition at create: `tcp` (Minecraft) or `udp` (Luanti). Every server before this migration is Minecraft.
export const sql = `
ALTER TABLE servers ADD COLUMN transport TEXT NOT NULL DEFAULT 'tcp' CHECK (transport IN ('tcp', 'udp'));
`;
