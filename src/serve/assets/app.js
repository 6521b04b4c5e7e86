// gza serve: live updates and confirmations. Every HTML fragment this script places was
// rendered, escaped, by the server; text from the server is never turned into markup here.
"use strict";

// A form with data-confirm asks first.
document.addEventListener("submit", (e) => {
  const message = e.target.getAttribute("data-confirm");
  if (message && !window.confirm(message)) e.preventDefault();
});

function listen(url, handlers) {
  const source = new EventSource(url);
  for (const [name, handle] of Object.entries(handlers)) {
    source.addEventListener(name, (e) => handle(JSON.parse(e.data)));
  }
  // EventSource reconnects by itself after a dropped connection.
  return source;
}

// The board: its columns are replaced whenever they change.
const board = document.getElementById("board");
if (board && board.dataset.stream) {
  listen(board.dataset.stream, {
    board: (data) => {
      board.innerHTML = data.html;
      board.dataset.updated = String(Date.now());
    },
  });
}

// A task: its facts when they change, its log as it grows. The stream starts at the log's
// offset the page holds, so after a lost connection it is opened again from where the page got
// to (EventSource's own reconnection would repeat the lines since the page was loaded).
const facts = document.getElementById("facts");
const log = document.getElementById("log");
function followTask() {
  const offset = log ? log.dataset.offset || "0" : "0";
  const source = listen(facts.dataset.stream + "?offset=" + encodeURIComponent(offset), {
    task: (data) => {
      facts.innerHTML = data.html;
      const status = document.querySelector('[data-live="status"]');
      if (status) {
        status.textContent = data.status;
        status.className = "status " + data.status;
      }
      const actions = document.querySelector(".task-head .actions");
      if (actions) actions.innerHTML = data.actions;
    },
    log: (data) => {
      if (!log) return;
      const follow = log.scrollTop + log.clientHeight >= log.scrollHeight - 8;
      if (log.classList.contains("empty")) {
        log.classList.remove("empty");
        log.classList.add("log");
        log.textContent = "";
      }
      log.insertAdjacentHTML("beforeend", data.html);
      log.dataset.offset = String(data.offset);
      if (follow) log.scrollTop = log.scrollHeight;
    },
  });
  source.onerror = () => {
    source.close();
    setTimeout(followTask, 2000);
  };
}
if (facts && facts.dataset.stream) followTask();
