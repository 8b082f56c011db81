/**
 * The dashboard's one script (served as /dashboard/static/dashboard.js). Progressive enhancement only: every page works
 * without it. It adds: copy buttons for a freshly minted secret, drag-and-drop upload with progress on the library page,
 * caption counters, the calendar's drag and the browser's time zone; the composer's part is composer-script.ts, served
 * after it in the same file.
 */
export const CLIENT_SCRIPT = String.raw`"use strict";
(function () {
  function copyFrom(button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target) return;
    var text = target.value || target.textContent || "";
    var done = function () {
      var status = document.getElementById(button.getAttribute("data-copy") + "-status");
      if (status) status.textContent = "Copied to the clipboard.";
      button.textContent = "Copied";
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { target.select(); document.execCommand("copy"); done(); });
    } else {
      target.select();
      document.execCommand("copy");
      done();
    }
  }

  function setupUpload(zone) {
    var form = zone.closest("form");
    var input = zone.querySelector("input[type=file]");
    var progress = document.getElementById("upload-progress");
    var status = document.getElementById("upload-status");
    if (!form || !input) return;
    function send(files) {
      if (!files || files.length === 0) return;
      var list = Array.prototype.slice.call(files);
      var index = 0;
      function next() {
        if (index >= list.length) {
          var done = form.getAttribute("data-done") || window.location.href;
          window.location.href = list.length > 1 ? done + (done.indexOf("?") < 0 ? "?" : "&") + "count=" + list.length : done;
          return;
        }
        var file = list[index++];
        var data = new FormData();
        data.append("_csrf", form.querySelector("input[name=_csrf]").value);
        data.append("file", file, file.name);
        var xhr = new XMLHttpRequest();
        xhr.open("POST", form.action);
        xhr.setRequestHeader("x-requested-with", "fetch");
        if (progress) { progress.hidden = false; progress.value = 0; }
        if (status) status.textContent = "Uploading " + file.name + "…";
        xhr.upload.onprogress = function (e) { if (progress && e.lengthComputable) progress.value = Math.round((e.loaded / e.total) * 100); };
        xhr.onload = function () {
          if (xhr.status >= 200 && xhr.status < 300) { if (status) status.textContent = file.name + " uploaded."; next(); }
          else { if (status) status.textContent = file.name + ": " + (xhr.responseText || "upload failed"); if (progress) progress.hidden = true; }
        };
        xhr.onerror = function () { if (status) status.textContent = "The upload failed; check the connection and try again."; };
        xhr.send(data);
      }
      next();
    }
    zone.addEventListener("dragover", function (e) { e.preventDefault(); zone.classList.add("over"); });
    zone.addEventListener("dragleave", function () { zone.classList.remove("over"); });
    zone.addEventListener("drop", function (e) { e.preventDefault(); zone.classList.remove("over"); send(e.dataTransfer && e.dataTransfer.files); });
    form.addEventListener("submit", function (e) { e.preventDefault(); send(input.files); });
  }

  // The person's time zone, taken from the browser the first time (the server marks the body while it is unset): sent
  // in the background, used from the next page on (no reload, so nothing jumps under the person's cursor).
  function sendZone() {
    var target = document.body.getAttribute("data-set-zone");
    var csrf = document.body.getAttribute("data-csrf") || "";
    var zone = "";
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
    if (!target || !zone || !window.fetch) return;
    fetch(target, {
      method: "POST",
      credentials: "same-origin",
      headers: { "x-requested-with": "fetch", "content-type": "application/x-www-form-urlencoded" },
      body: "_csrf=" + encodeURIComponent(csrf) + "&timeZone=" + encodeURIComponent(zone)
    });
  }

  // Sign-in and setup forms carry the browser's zone, so the first page after them already shows local times.
  function fillZoneFields() {
    var zone = "";
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { zone = ""; }
    document.querySelectorAll("input[data-browser-zone]").forEach(function (input) { input.value = zone; });
  }

  // Caption counters: one per platform, recounted as the person types (graphemes, links at the platform's length), of
  // the caption as the server stores it: without leading and trailing white space.
  var segmenter = window.Intl && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;
  function graphemes(text) { return segmenter ? Array.from(segmenter.segment(text)).length : Array.from(text).length; }
  function setupCounters(list) {
    var area = document.getElementById(list.getAttribute("data-for"));
    if (!area) return;
    function update() {
      list.querySelectorAll(".counter").forEach(function (item) {
        var max = Number(item.getAttribute("data-max"));
        var urlLength = item.getAttribute("data-url-length");
        var typed = area.value.trim();
        var text = urlLength ? typed.replace(/https?:\/\/[^\s<>"]+/g, new Array(Number(urlLength) + 1).join("x")) : typed;
        var n = graphemes(text);
        item.querySelector(".count").textContent = String(n);
        item.classList.toggle("over", n > max);
        item.querySelector(".over-text").textContent = n > max ? " · too long" : "";
      });
    }
    area.addEventListener("input", update);
  }

  // Calendar: drag a post to another day; the drop submits the same reschedule form the post's page has (new date,
  // same time of day), so the server answers as for the form.
  function setupDrag(grid) {
    var csrf = grid.getAttribute("data-csrf") || "";
    var back = grid.getAttribute("data-back") || "";
    grid.querySelectorAll(".chip[draggable=true]").forEach(function (chip) {
      chip.addEventListener("dragstart", function (e) {
        e.dataTransfer.setData("text/plain", chip.id);
        e.dataTransfer.effectAllowed = "move";
        chip.classList.add("dragging");
      });
      chip.addEventListener("dragend", function () { chip.classList.remove("dragging"); });
    });
    grid.querySelectorAll(".cal-day[data-date]").forEach(function (day) {
      day.addEventListener("dragover", function (e) { e.preventDefault(); e.dataTransfer.dropEffect = "move"; day.classList.add("drop-over"); });
      day.addEventListener("dragleave", function () { day.classList.remove("drop-over"); });
      day.addEventListener("drop", function (e) {
        e.preventDefault();
        day.classList.remove("drop-over");
        var chip = document.getElementById(e.dataTransfer.getData("text/plain"));
        if (!chip || !chip.getAttribute("data-reschedule") || chip.closest(".cal-day") === day) return;
        var form = document.createElement("form");
        form.method = "post";
        form.action = chip.getAttribute("data-reschedule");
        [["_csrf", csrf], ["date", day.getAttribute("data-date")], ["time", chip.getAttribute("data-time")], ["back", back]].forEach(function (pair) {
          var input = document.createElement("input");
          input.type = "hidden";
          input.name = pair[0];
          input.value = pair[1];
          form.appendChild(input);
        });
        document.body.appendChild(form);
        form.submit();
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    sendZone();
    fillZoneFields();
    document.querySelectorAll(".cal-grid[data-csrf]").forEach(setupDrag);
    document.querySelectorAll("ul.counters[data-for]").forEach(setupCounters);
    document.querySelectorAll("button[data-copy]").forEach(function (b) {
      b.hidden = false;
      b.addEventListener("click", function () { copyFrom(b); });
    });
    document.querySelectorAll(".dropzone").forEach(setupUpload);
  });
})();
`;
