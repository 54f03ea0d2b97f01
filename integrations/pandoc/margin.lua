--[[
margin.lua: a Pandoc (and Quarto) filter that publishes what Margin computed.

  pandoc --lua-filter integrations/pandoc/margin.lua chapter.md -o chapter.html

* {calc}`t -> days` (Pandoc reads it as the text "{calc}" then code) becomes
  the value, in a <span class="margin-value">;
* calc blocks (```calc, ```{calc}, :::{calc}) show each statement's value and
  each check's verdict as trailing comments (# = 22.5 days, # ✓);
* problems (**Question 1:** ...) get a badge: passed, failed or untested;
* claim markers (<!-- ≈ t -->) and hidden calc comments are left out of the
  output, so Markdown and LaTeX exports stay clean;
* every error Margin reports is printed as file:line on stderr, and by
  default the conversion fails (fail-on: error); "warning" only prints them.

The values come from one `margin render --format json` per Pandoc run (or
from a file made beforehand, e.g. by Quarto's pre-render step). Settings, in
the document's metadata or the environment:

  margin:                      MARGIN_JSON     a render JSON file to read
    json: _margin.json         MARGIN_COMMAND  how to run Margin (default: margin)
    command: margin            MARGIN_FAIL_ON  error | warning | none
    fail-on: error

docs/publishing.md has the set-up for Pandoc and Quarto.
]]

-- A small JSON reader for Pandocs before 3.1.1, which lack pandoc.json.
local function decode_json(text)
  if pandoc.json ~= nil then
    return pandoc.json.decode(text, false)
  end
  local position = 1
  local value
  local function skip()
    position = text:find("[^ \t\r\n]", position) or #text + 1
  end
  local function fail(what)
    error("margin.lua: the render JSON is not valid (" .. what .. " at byte " .. position .. ")")
  end
  local escapes = { b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" }
  local function read_string()
    local pieces = {}
    position = position + 1
    while true do
      local stop = text:find('["\\]', position)
      if stop == nil then fail("unterminated string") end
      pieces[#pieces + 1] = text:sub(position, stop - 1)
      if text:sub(stop, stop) == '"' then
        position = stop + 1
        return table.concat(pieces)
      end
      local kind = text:sub(stop + 1, stop + 1)
      if kind == "u" then
        local code = tonumber(text:sub(stop + 2, stop + 5), 16)
        if code >= 0xD800 and code <= 0xDBFF then -- a surrogate pair
          local low = tonumber(text:sub(stop + 8, stop + 11), 16)
          code = 0x10000 + (code - 0xD800) * 0x400 + (low - 0xDC00)
          stop = stop + 6
        end
        pieces[#pieces + 1] = utf8.char(code)
        position = stop + 6
      else
        pieces[#pieces + 1] = escapes[kind] or fail("bad escape")
        position = stop + 2
      end
    end
  end
  function value()
    skip()
    local first = text:sub(position, position)
    if first == "{" then
      local object = {}
      position = position + 1
      skip()
      if text:sub(position, position) == "}" then
        position = position + 1
        return object
      end
      while true do
        skip()
        local key = read_string()
        skip()
        if text:sub(position, position) ~= ":" then fail("missing ':'") end
        position = position + 1
        object[key] = value()
        skip()
        local separator = text:sub(position, position)
        position = position + 1
        if separator == "}" then return object end
        if separator ~= "," then fail("missing ','") end
      end
    elseif first == "[" then
      local array = {}
      position = position + 1
      skip()
      if text:sub(position, position) == "]" then
        position = position + 1
        return array
      end
      while true do
        array[#array + 1] = value()
        skip()
        local separator = text:sub(position, position)
        position = position + 1
        if separator == "]" then return array end
        if separator ~= "," then fail("missing ','") end
      end
    elseif first == '"' then
      return read_string()
    elseif text:sub(position, position + 3) == "true" then
      position = position + 4
      return true
    elseif text:sub(position, position + 4) == "false" then
      position = position + 5
      return false
    elseif text:sub(position, position + 3) == "null" then
      position = position + 4
      return nil
    end
    local number = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", position)
    if number == nil or number == "" then fail("unexpected character") end
    position = position + #number
    return tonumber(number)
  end
  return value()
end

local function setting(meta, key, variable, default)
  local table_ = meta.margin
  if table_ ~= nil and type(table_) == "table" and table_[key] ~= nil then
    return pandoc.utils.stringify(table_[key])
  end
  return os.getenv(variable) or default
end

local function shell_quote(text)
  return "'" .. text:gsub("'", "'\\''") .. "'"
end

local function absolute(path)
  if path:sub(1, 1) ~= "/" then
    path = pandoc.system.get_working_directory() .. "/" .. path
  end
  return pandoc.path.normalize(path)
end

-- The render JSON: from a file, or from one run of margin over the input files.
local function load_report(meta)
  local file = setting(meta, "json", "MARGIN_JSON", nil)
  local text
  if file ~= nil then
    local handle = io.open(file, "r") or error("margin.lua: cannot read " .. file)
    text = handle:read("a")
    handle:close()
  else
    local inputs = {}
    for _, input in ipairs(PANDOC_STATE.input_files) do
      if input ~= "-" then inputs[#inputs + 1] = shell_quote(input) end
    end
    if #inputs == 0 then
      error("margin.lua: Pandoc reads standard input; name the file, or give margin.json (MARGIN_JSON)")
    end
    local command = setting(meta, "command", "MARGIN_COMMAND", "margin")
    local pipe = io.popen(command .. " render --format json " .. table.concat(inputs, " "), "r")
    text = pipe:read("a")
    local _, _, code = pipe:close()
    if code ~= nil and code >= 2 or text == "" then
      error("margin.lua: '" .. command .. " render --format json' failed (exit " .. tostring(code) .. ")")
    end
  end
  return decode_json(text)
end

-- The report's record for one input file (matched by path, then by absolute path).
local function file_record(report, input)
  local wanted = absolute(input)
  for path, record in pairs(report.files) do
    if path == input or record.absolute == wanted then return record end
  end
  return nil
end

local record -- this document's record
local used_roles, used_blocks, used_problems = {}, {}, {}
local fail_on

local function take_role(expr)
  for index, role in ipairs(record.roles) do
    if not used_roles[index] and role.expr == expr then
      used_roles[index] = true
      return role
    end
  end
  return nil
end

local function squeeze(text)
  return (text:gsub("[%s*_\\]", ""))
end

local function take_block(source)
  local fallback
  for index, block in ipairs(record.blocks) do
    if not used_blocks[index] and not block.hidden then
      if squeeze(block.source) == squeeze(source) then
        used_blocks[index] = true
        return block
      end
      fallback = fallback or index
    end
  end
  if fallback ~= nil then
    used_blocks[fallback] = true
    return record.blocks[fallback]
  end
  return nil
end

local function starts_with(text, prefix)
  return text:sub(1, #prefix) == prefix
end

local CLAIM_OPERATORS = { "≈", "~=", "==", "<=", ">=", "≤", "≥", "<", ">", "=" }

local function is_claim_marker(raw)
  if raw.format ~= "html" or not starts_with(raw.text, "<!--") then return false end
  local body = raw.text:sub(5):gsub("^%s+", "")
  for _, operator in ipairs(CLAIM_OPERATORS) do
    if starts_with(body, operator) then return true end
  end
  return false
end

local function is_hidden_calc(raw)
  return raw.format == "html" and raw.text:match("^<!%-%-%s*calc[ \t]*\r?\n") ~= nil
end

local function value_span(role)
  return pandoc.Span({ pandoc.Str(role.display) }, pandoc.Attr("", { "margin-value" }, { { "title", role.expr } }))
end

local function Inlines(inlines)
  if record == nil then return nil end
  local out = pandoc.List()
  local index = 1
  while index <= #inlines do
    local item = inlines[index]
    local following = inlines[index + 1]
    if item.t == "Str" and item.text:sub(-6) == "{calc}" and following ~= nil and following.t == "Code" then
      local prefix = item.text:sub(1, -7)
      if prefix ~= "" then out:insert(pandoc.Str(prefix)) end
      local role = take_role(following.text)
      if role ~= nil and role.ok then
        out:insert(value_span(role))
      else
        out:insert(pandoc.Code(following.text, pandoc.Attr("", { "margin-unevaluated" })))
      end
      index = index + 2
    elseif item.t == "RawInline" and is_claim_marker(item) then
      index = index + 1 -- the checked number stays; its marker is for Margin only
    else
      out:insert(item)
      index = index + 1
    end
  end
  return out
end

local function calc_block(source)
  local block = take_block(source)
  local text = block and block.rendered or source
  return pandoc.CodeBlock(text, pandoc.Attr("", { "calc", "margin-calc" }))
end

local function CodeBlock(block)
  if record == nil then return nil end
  if block.classes[1] == "calc" or block.classes[1] == "{calc}" then
    return calc_block(block.text)
  end
  return nil
end

local BADGES = { pass = "✓ passed", fail = "✗ failed", untested = "untested" }

local function badge(problem)
  local text = BADGES[problem.status] or problem.status
  if problem.status == "fail" and problem.checks.failed > 0 then
    text = text .. ": " .. problem.checks.failed .. " of " .. problem.checks.total .. " checks"
  end
  return pandoc.Span({ pandoc.Str(text) }, pandoc.Attr("", { "margin-badge", "margin-" .. problem.status }))
end

local function take_problem(lead)
  for index, problem in ipairs(record.problems) do
    if not used_problems[index] and starts_with(lead, problem.id) then
      used_problems[index] = true
      return problem
    end
  end
  return nil
end

local function Block(block)
  if record == nil then return nil end
  if block.t == "Div" and block.classes[1] == "{calc}" then
    local lines = {}
    for _, paragraph in ipairs(block.content) do
      lines[#lines + 1] = pandoc.utils.stringify(paragraph)
    end
    return calc_block(table.concat(lines, "\n"))
  elseif block.t == "RawBlock" and (is_hidden_calc(block) or is_claim_marker(block)) then
    return {}
  elseif block.t == "Para" and block.content[1] ~= nil and block.content[1].t == "Strong" then
    local problem = take_problem(pandoc.utils.stringify(block.content[1]))
    if problem ~= nil then
      block.content:insert(1, pandoc.Space())
      block.content:insert(1, badge(problem))
      return block
    end
  end
  return nil
end

local function report_errors()
  local failures = 0
  for _, diagnostic in ipairs(record.diagnostics) do
    if diagnostic.severity == "error" then
      failures = failures + 1
      if fail_on ~= "none" then
        io.stderr:write(string.format("%s:%d:%d: %s %s: %s\n", record.path, diagnostic.line, diagnostic.column,
          fail_on == "error" and "error" or "warning", diagnostic.code, diagnostic.message))
      end
    end
  end
  for _, role in ipairs(record.roles) do
    if not role.ok then
      failures = failures + 1
      if fail_on ~= "none" then
        io.stderr:write(string.format("%s:%d:%d: %s: {calc}`%s` has no value: %s\n", record.path, role.line,
          role.column, fail_on == "error" and "error" or "warning", role.expr, role.message))
      end
    end
  end
  return failures
end

local function Pandoc(document)
  fail_on = setting(document.meta, "fail-on", "MARGIN_FAIL_ON", "error")
  local report = load_report(document.meta)
  local input = PANDOC_STATE.input_files[1]
  record = input and file_record(report, input)
  if record == nil then
    io.stderr:write("margin.lua: Margin reported nothing for " .. tostring(input) .. "\n")
    return nil
  end
  local failures = report_errors()
  local blocks = pandoc.walk_block(pandoc.Div(document.blocks), { Inlines = Inlines, CodeBlock = CodeBlock })
  blocks = pandoc.walk_block(blocks, { Div = Block, RawBlock = Block, Para = Block })
  document.blocks = blocks.content
  if failures > 0 and fail_on == "error" then
    error(string.format("margin: %d error%s in %s (fail-on: error)", failures, failures == 1 and "" or "s", record.path))
  end
  return document
end

return { { Pandoc = Pandoc } }
