-- gsh_report: the hosting service's window into a Luanti world (docs/architecture.md "Software definitions").
-- Loaded into every world by luanti-launcher.cjs, which reads what this writes and feeds it the console.
--   * Every second it writes gsh_status.json in the world folder: the server steps counted over the last
--     second (reported as `tps`), the connected players, and the time. The launcher turns it into reports.
--   * Luanti's dedicated server has no console on stdin: the launcher appends each console line to
--     gsh_console.txt in the world folder, and this mod runs each new line as a chat command of the server
--     (without a leading "/" a line is said to every player), printing the command's answer to the log.
--   * The player lists (luanti.json player_lists): gsh_players.json, copied into the world before every start,
--     holds the whitelist (with its switch) and the bans; a refused player is told why before joining. The
--     console command /gsh_players changes them while the server runs (whoever they now refuse is kicked); the
--     service keeps them for the next start.
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

-- The player lists, by lowercased name (Luanti refuses a second player whose name differs only in case).
local lists = { whitelist = {}, bans = {} }
local whitelist_on = false
do
  local f = io.open(world .. "/gsh_players.json", "rb")
  local data = f and minetest.parse_json(f:read("*a") or "") or nil
  if f then f:close() end
  if type(data) == "table" then
    for list in pairs(lists) do
      local names = type(data[list]) == "table" and data[list].names or nil
      if type(names) == "table" then
        for _, n in ipairs(names) do lists[list][string.lower(n)] = true end
      end
    end
    whitelist_on = type(data.whitelist) == "table" and data.whitelist.enabled == true
  end
end

local function refusal(name)
  local key = string.lower(name)
  if lists.bans[key] then return "You are banned from this server." end
  if whitelist_on and not lists.whitelist[key] then return "You are not whitelisted on this server." end
  return nil
end

minetest.register_on_prejoinplayer(function(name)
  -- Luanti refuses these itself before any mod is asked (PLAYERNAME_ALLOWED_CHARS, PLAYERNAME_SIZE in its
  -- server); checked again so that no name the service cannot show safely ever joins (issue 39 §3).
  if #name > 20 or not name:match("^[A-Za-z0-9_%-]+$") then return "Your name is not a valid Luanti name." end
  local why = refusal(name)
  if why then minetest.log("action", "[gsh] refused " .. name .. ": " .. why) end
  return why
end)

minetest.register_chatcommand("gsh_players", {
  params = "<whitelist|bans> <add|remove> <name> | whitelist <on|off>",
  description = "The hosting service's player lists",
  privs = { server = true },
  func = function(_, param)
    local list, verb, name = param:match("^(%a+) (%a+) ?([%w_%-]*)$")
    if not list or not lists[list] then return false, "usage: /gsh_players " .. "<whitelist|bans> <add|remove> <name> | whitelist <on|off>" end
    if (verb == "on" or verb == "off") and list == "whitelist" and name == "" then
      whitelist_on = verb == "on"
    elseif (verb == "add" or verb == "remove") and name ~= "" then
      lists[list][string.lower(name)] = (verb == "add") or nil
    else
      return false, "usage: /gsh_players <whitelist|bans> <add|remove> <name> | whitelist <on|off>"
    end
    -- Whoever the lists now refuse leaves (a ban, or a whitelist that no longer has them).
    for _, player in ipairs(minetest.get_connected_players()) do
      local why = refusal(player:get_player_name())
      if why then minetest.kick_player(player:get_player_name(), why) end
    end
    return true, "player lists: " .. param
  end,
})

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
    -- Builtin answers are translatable strings (escape sequences around the text): log the plain English.
    minetest.log("action", "[console] " .. minetest.strip_colors(minetest.get_translated_string("en", message)))
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
