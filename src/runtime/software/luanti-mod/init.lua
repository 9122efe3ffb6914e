-- gsh_report: the hosting service's window into a Luanti world (docs/architecture.md "Software definitions").
-- Loaded into every world by luanti-launcher.cjs, which reads what this writes and feeds it the console.
--   * Every second it writes gsh_status.json in the world folder: the server steps counted over the last
--     second (reported as `tps`), the connected players, and the time. The launcher turns it into reports.
--   * Luanti's dedicated server has no console on stdin: the launcher appends each console line to
--     gsh_console.txt in the world folder, and this mod runs each new line as a chat command of the server
--     (without a leading "/" a line is said to every player), printing the command's answer to the log.
local world = minetest.get_worldpath()
local status_file = world .. "/gsh_status.json"
local console_file = world .. "/gsh_console.txt"
local steps = 0
local elapsed = 0
local console_offset = 0

-- Lines written before this server life started are old: start reading at the file's current end.
do
  local f = io.open(console_file, "rb")
  if f then
    console_offset = f:seek("end")
    f:close()
  end
end

local function run(line)
  if line == "" then return end
  if line:sub(1, 1) ~= "/" then
    minetest.chat_send_all("[server] " .. line)
    minetest.log("action", "[console] said: " .. line)
    return
  end
  local name, param = line:match("^/(%S+)%s*(.*)$")
  local def = name and minetest.registered_chatcommands[name]
  if not def then
    minetest.log("action", "[console] unknown command: " .. line)
    return
  end
  -- The console is the server's operator: no privilege check, as on a server console.
  local ok, success, message = pcall(def.func, "", param or "")
  if not ok then
    minetest.log("action", "[console] " .. name .. " failed: " .. tostring(success))
  elseif message and message ~= "" then
    minetest.log("action", "[console] " .. message)
  end
end

local function read_console()
  local f = io.open(console_file, "rb")
  if not f then return end
  local size = f:seek("end")
  if size < console_offset then console_offset = 0 end -- the file was replaced
  f:seek("set", console_offset)
  local data = f:read("*a") or ""
  f:close()
  -- Only whole lines: a line the launcher is still writing is read at the next step.
  local last = data:match("^.*()\n")
  if not last then return end
  console_offset = console_offset + last
  for line in data:sub(1, last):gmatch("([^\n]*)\n") do run(line) end
end

local function write_status(tps)
  local names = {}
  for _, player in ipairs(minetest.get_connected_players()) do
    names[#names + 1] = player:get_player_name()
  end
  minetest.safe_file_write(status_file, minetest.write_json({
    tps = tps,
    players = names,
    max_players = tonumber(minetest.settings:get("max_users")) or 15,
    time = os.time(),
  }))
end

minetest.register_globalstep(function(dtime)
  steps = steps + 1
  elapsed = elapsed + dtime
  read_console()
  if elapsed >= 1 then
    write_status(steps / elapsed)
    steps = 0
    elapsed = 0
  end
end)

-- Joins and leaves are told at once, not at the next second.
minetest.register_on_joinplayer(function() write_status(elapsed > 0 and steps / elapsed or 0) end)
minetest.register_on_leaveplayer(function()
  minetest.after(0, function() write_status(elapsed > 0 and steps / elapsed or 0) end)
end)
