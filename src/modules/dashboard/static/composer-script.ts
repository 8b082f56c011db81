/**
 * The composer's part of the dashboard script (appended to client-script.ts's in /dashboard/static/dashboard.js).
 * Progressive enhancement of pages/composer.ts, whose every button works without it: network tabs; moving and
 * removing images and thread parts in place (buttons, and dragging an image by its thumbnail), with the cursor kept on
 * the button and the move announced; files uploaded one by one to the library before the form is sent (so several big
 * photos never make one oversized request); the alt-text hints, each network's counts and hints and its preview redrawn
 * as the person types (the same rules and markup as composer/networks.ts and composer/preview.ts); and a warning
 * before leaving with unsaved changes.
 */
export const COMPOSER_SCRIPT = String.raw`
(function () {
  var LINK = /https?:\/\/[^\s<>"]+/g;
  var segmenter = window.Intl && Intl.Segmenter ? new Intl.Segmenter(undefined, { granularity: "grapheme" }) : null;
  function graphemes(text) { return segmenter ? Array.from(segmenter.segment(text)).length : Array.from(text).length; }
  function counted(typed, urlLength) {
    var text = typed.trim();
    if (urlLength) text = text.replace(LINK, new Array(Number(urlLength) + 1).join("x"));
    return graphemes(text);
  }
  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }
  // Text with its addresses as links (the same cut as composer/preview.ts: a closing full stop is not the link's).
  function linkified(text) {
    var p = el("p", "pv-text");
    var last = 0;
    text.replace(LINK, function (match, at) {
      var url = match.replace(/[.,;:!?)\]]+$/, "");
      p.appendChild(document.createTextNode(text.slice(last, at)));
      var a = el("a", "", url);
      a.href = url;
      a.rel = "nofollow noopener noreferrer";
      p.appendChild(a);
      last = at + url.length;
      return match;
    });
    p.appendChild(document.createTextNode(text.slice(last)));
    return p;
  }

  function setupTabs(box) {
    var list = box.querySelector(".tab-list");
    var tabs = Array.prototype.slice.call(box.querySelectorAll("[role=tab]"));
    if (!list || tabs.length === 0) return;
    list.hidden = false;
    box.classList.add("tabbed");
    function select(tab, focus) {
      tabs.forEach(function (t) {
        var on = t === tab;
        t.setAttribute("aria-selected", on ? "true" : "false");
        t.tabIndex = on ? 0 : -1;
        var panel = document.getElementById(t.getAttribute("aria-controls"));
        if (panel) panel.hidden = !on;
      });
      if (focus) tab.focus();
    }
    tabs.forEach(function (tab, i) {
      var panel = document.getElementById(tab.getAttribute("aria-controls"));
      if (panel) { panel.setAttribute("role", "tabpanel"); panel.setAttribute("aria-labelledby", tab.id); panel.tabIndex = 0; }
      tab.addEventListener("click", function () { select(tab, false); });
      tab.addEventListener("keydown", function (e) {
        var next = null;
        if (e.key === "ArrowRight") next = tabs[(i + 1) % tabs.length];
        else if (e.key === "ArrowLeft") next = tabs[(i - 1 + tabs.length) % tabs.length];
        else if (e.key === "Home") next = tabs[0];
        else if (e.key === "End") next = tabs[tabs.length - 1];
        if (next) { e.preventDefault(); select(next, true); }
      });
    });
    // A panel whose network has something to fix opens first.
    var troubled = tabs.filter(function (t) {
      var panel = document.getElementById(t.getAttribute("aria-controls"));
      return panel && panel.querySelector(".net-hints li, .counter.over, .has-error");
    })[0];
    select(troubled || tabs[0], false);
  }

  function setupComposer(form) {
    var status = document.getElementById("composer-status");
    var dirty = false;
    function say(text) { if (status) status.textContent = text; }

    // Positions, button states and the part choices of "Add them to" after a move or removal.
    function renumber() {
      form.querySelectorAll("ol.image-list").forEach(function (list) {
        var items = Array.prototype.slice.call(list.children);
        items.forEach(function (item, i) {
          item.querySelectorAll(".pos").forEach(function (pos) { pos.textContent = String(i + 1); });
          var up = item.querySelector("[data-move=up]");
          var down = item.querySelector("[data-move=down]");
          if (up) up.disabled = i === 0;
          if (down) down.disabled = i === items.length - 1;
        });
        var label = list.previousElementSibling;
        if (label && label.classList.contains("part-images-label")) label.hidden = items.length === 0;
      });
      var parts = Array.prototype.slice.call(form.querySelectorAll("ol.parts > li.part"));
      parts.forEach(function (part, i) {
        part.querySelectorAll(":scope > .part-title .pos, :scope > .row label .pos, :scope > .item-moves .pos").forEach(function (pos) { pos.textContent = String(i + 2); });
        var moves = part.querySelector(":scope > .item-moves");
        if (!moves) return;
        moves.querySelector("[data-move=up]").disabled = i === 0;
        moves.querySelector("[data-move=down]").disabled = i === parts.length - 1;
      });
      var select = form.querySelector("select[name=pick_to]");
      if (select) {
        Array.prototype.slice.call(select.options).forEach(function (option) {
          if (option.value === "post") return;
          var index = parts.findIndex(function (p) { return p.getAttribute("data-key") === option.value; });
          if (index < 0) option.remove(); else option.textContent = "Part " + (index + 2);
        });
      }
      var count = form.querySelector("[data-image-count]");
      var postList = form.querySelector("ol.image-list[data-scope=post]");
      if (count && postList) count.textContent = String(postList.children.length);
    }

    function what(item) { return item.classList.contains("part") ? "Part" : "Image"; }
    function position(item) {
      var base = item.classList.contains("part") ? 2 : 1;
      return Array.prototype.indexOf.call(item.parentElement.children, item) + base;
    }

    form.addEventListener("click", function (e) {
      var button = e.target.closest("button[data-move], button[data-remove]");
      if (!button || !form.contains(button)) return;
      var item = button.closest("li.image-item, li.part");
      if (!item) return;
      e.preventDefault();
      dirty = true;
      if (button.hasAttribute("data-remove")) {
        var label = what(item) + " " + position(item);
        var next = item.nextElementSibling || item.previousElementSibling;
        var list = item.parentElement;
        item.remove();
        renumber();
        var target = next && next.querySelector("[data-remove]");
        (target || form.querySelector(list.classList.contains("parts") ? "#op-add-part" : "#op-add-images") || form).focus();
        say(label + " removed.");
      } else {
        var up = button.getAttribute("data-move") === "up";
        var sibling = up ? item.previousElementSibling : item.nextElementSibling;
        if (!sibling) return;
        if (up) item.parentElement.insertBefore(item, sibling); else item.parentElement.insertBefore(sibling, item);
        renumber();
        var own = item.querySelector("[data-move=" + (up ? "up" : "down") + "]");
        var other = item.querySelector("[data-move=" + (up ? "down" : "up") + "]");
        (own && !own.disabled ? own : other).focus();
        say(what(item) + " moved to position " + position(item) + ".");
      }
      refresh();
    });

    // Dragging an image by its thumbnail, within its own list.
    var dragged = null;
    form.addEventListener("pointerdown", function (e) {
      var thumb = e.target.closest(".image-thumb");
      if (thumb) thumb.closest("li.image-item").draggable = true;
    });
    form.addEventListener("dragstart", function (e) {
      var item = e.target.closest && e.target.closest("li.image-item");
      if (!item || !item.draggable) return;
      dragged = item;
      item.classList.add("dragging");
      e.dataTransfer.effectAllowed = "move";
      e.dataTransfer.setData("text/plain", item.getAttribute("data-asset"));
    });
    form.addEventListener("dragover", function (e) {
      if (!dragged) return;
      var over = e.target.closest && e.target.closest("li.image-item");
      if (!over || over === dragged || over.parentElement !== dragged.parentElement) return;
      e.preventDefault();
      var box = over.getBoundingClientRect();
      var before = e.clientY < box.top + box.height / 2;
      over.parentElement.insertBefore(dragged, before ? over : over.nextElementSibling);
    });
    form.addEventListener("drop", function (e) { if (dragged) e.preventDefault(); });
    form.addEventListener("dragend", function () {
      if (!dragged) return;
      dragged.classList.remove("dragging");
      dragged.draggable = false;
      renumber();
      say("Image moved to position " + position(dragged) + ".");
      dragged = null;
      dirty = true;
      refresh();
    });

    // What the page holds now, read back from its fields in their order.
    function imagesOf(list) {
      if (!list) return [];
      return Array.prototype.slice.call(list.children).map(function (item) {
        var alt = item.querySelector("textarea[data-alt]");
        return { src: item.getAttribute("data-src"), mime: item.getAttribute("data-mime"), alt: alt ? alt.value : "" };
      });
    }
    function content() {
      var caption = form.querySelector("[data-main-caption]");
      var comment = form.querySelector("[data-first-comment]");
      return {
        caption: caption ? caption.value : "",
        images: imagesOf(form.querySelector("ol.image-list[data-scope=post]")),
        thread: Array.prototype.slice.call(form.querySelectorAll("ol.parts > li.part")).map(function (part) {
          var text = part.querySelector("[data-part-caption]");
          return { caption: text ? text.value : "", images: imagesOf(part.querySelector("ol.image-list")) };
        }),
        firstComment: comment ? comment.value : ""
      };
    }
    function effective(c, panel) {
      var own = panel.querySelector("[data-version-caption]");
      var noThread = panel.querySelector("[data-version-nothread]");
      var noComment = panel.querySelector("[data-version-nocomment]");
      return {
        caption: own && own.value.trim() !== "" ? own.value : c.caption,
        images: c.images,
        thread: noThread && noThread.checked ? [] : c.thread,
        firstComment: noComment && noComment.checked ? "" : c.firstComment
      };
    }
    function grid(images, max) {
      var sent = images.slice(0, max);
      if (sent.length === 0) return null;
      var shown = sent.slice(0, 4);
      var box = el("div", "pv-grid pv-grid-" + shown.length);
      shown.forEach(function (image, i) {
        var tile = el("span", "pv-tile");
        var img = el("img");
        img.src = image.src;
        img.alt = image.alt;
        tile.appendChild(img);
        if (i === shown.length - 1 && sent.length > shown.length) {
          var more = el("span", "pv-more", "+" + (sent.length - shown.length));
          more.appendChild(el("span", "sr-only", " more images"));
          tile.appendChild(more);
        }
        box.appendChild(tile);
      });
      return box;
    }
    function drawPreview(pv, e) {
      var head = pv.querySelector(".pv-head");
      var max = Number(pv.getAttribute("data-max-images"));
      var fresh = [head];
      fresh.push(e.caption.trim() === "" ? el("p", "pv-text pv-empty", "The caption shows here as you write it.") : linkified(e.caption.trim()));
      var g = grid(e.images, max);
      if (g) fresh.push(g);
      var thread = el("ol", "pv-thread plain");
      e.thread.forEach(function (part) {
        var li = el("li", "pv-reply");
        li.appendChild(head.cloneNode(true));
        li.appendChild(linkified(part.caption.trim()));
        var pg = grid(part.images, max);
        if (pg) li.appendChild(pg);
        thread.appendChild(li);
      });
      fresh.push(thread);
      var comment = el("div", "pv-comment");
      comment.hidden = e.firstComment.trim() === "";
      comment.appendChild(el("p", "pv-comment-label", "First comment"));
      comment.appendChild(head.cloneNode(true));
      comment.appendChild(linkified(e.firstComment.trim()));
      fresh.push(comment);
      pv.replaceChildren.apply(pv, fresh);
    }
    function drawCounts(box, e) {
      var list = box.querySelector(".net-counts");
      var max = box.getAttribute("data-max");
      if (!list || !max || box.hasAttribute("data-own-count")) return;
      var urlLength = box.getAttribute("data-url-length");
      var texts = [["Post", e.caption]];
      e.thread.forEach(function (part, i) { texts.push(["Part " + (i + 2), part.caption]); });
      if (e.firstComment.trim() !== "") texts.push(["First comment", e.firstComment]);
      list.replaceChildren.apply(list, texts.map(function (pair) {
        var n = counted(pair[1], urlLength);
        var over = n > Number(max);
        var li = el("li", "counter" + (over ? " over" : ""), pair[0] + ": ");
        li.appendChild(el("span", "count", String(n)));
        li.appendChild(document.createTextNode("/" + max));
        li.appendChild(el("span", "over-text", over ? " · too long" : ""));
        return li;
      }));
    }
    // The same sentences as composer/networks.ts's hintsFor.
    function drawHints(box, e) {
      var list = box.querySelector(".net-hints");
      if (!list) return;
      var name = box.getAttribute("data-name");
      var maxImages = Number(box.getAttribute("data-max-images"));
      var maxParts = Number(box.getAttribute("data-max-parts"));
      var types = (box.getAttribute("data-image-types") || "").split(",");
      var out = [];
      function tooMany(count, where) {
        if (count <= maxImages) return;
        out.push(maxImages === 0 ? name + " posts text only: remove the images of " + where + "." : name + " takes at most " + maxImages + " images per post; " + where + " has " + count + ". Remove " + (count - maxImages) + ".");
      }
      tooMany(e.images.length, "the post");
      if (box.getAttribute("data-requires-image") === "1" && e.images.length === 0) out.push(name + " needs at least one image in the post.");
      if (e.thread.length > 0 && maxParts === 0) out.push(name + " has no threads: tick “No thread on " + name + "” below, or it cannot be scheduled there.");
      else if (e.thread.length > maxParts) out.push(name + " takes at most " + maxParts + " thread parts; this thread has " + e.thread.length + ".");
      else e.thread.forEach(function (part, i) { tooMany(part.images.length, "part " + (i + 2)); });
      if (e.firstComment.trim() !== "" && box.getAttribute("data-first-comment") !== "1") out.push(name + " takes no first comment: tick “No first comment on " + name + "” below, or it cannot be scheduled there.");
      var bad = [];
      e.images.concat.apply(e.images, e.thread.map(function (p) { return p.images; })).forEach(function (image) {
        if (image.mime && types.indexOf(image.mime) < 0) {
          var label = (image.mime.split("/")[1] || image.mime).toUpperCase();
          if (bad.indexOf(label) < 0) bad.push(label);
        }
      });
      if (bad.length > 0) out.push(name + " cannot send " + bad.join(" or ") + " images; choose other images.");
      var now = out.join("\n");
      if (list.getAttribute("data-shown") === now) return;
      list.setAttribute("data-shown", now);
      list.replaceChildren.apply(list, out.map(function (text) { return el("li", "notice notice-warn", text); }));
    }
    function refresh() {
      var c = content();
      form.querySelectorAll(".net-panel").forEach(function (panel) {
        var e = effective(c, panel);
        panel.querySelectorAll(".net-connection").forEach(function (box) {
          var pv = box.querySelector(".pv");
          if (pv) drawPreview(pv, e);
          drawCounts(box, e);
          drawHints(box, e);
        });
      });
    }
    var pending = 0;
    form.addEventListener("input", function (e) {
      dirty = true;
      var alt = e.target.closest && e.target.closest("textarea[data-alt]");
      if (alt) {
        var hint = document.getElementById(alt.id + "-hint");
        var missing = alt.value.trim() === "";
        if (hint && hint.classList.contains("alt-missing") !== missing) {
          hint.classList.toggle("alt-missing", missing);
          hint.textContent = missing ? "No alt text yet: describe the image for people who cannot see it." : "Read aloud to people who cannot see the image.";
        }
      }
      if (pending) cancelAnimationFrame(pending);
      pending = requestAnimationFrame(function () { pending = 0; refresh(); });
    });
    form.addEventListener("change", function () { dirty = true; refresh(); });

    // Files go to the library one request each, then the form is sent with them ticked.
    var upload = form.querySelector("input[data-composer-upload]");
    var sending = false;
    form.addEventListener("submit", function (e) {
      var button = e.submitter;
      if (sending || !upload || !upload.files || upload.files.length === 0 || !window.FormData) { dirty = false; return; }
      e.preventDefault();
      sending = true;
      var files = Array.prototype.slice.call(upload.files);
      var csrf = form.querySelector("input[name=_csrf]").value;
      var index = 0;
      function fail(text) {
        sending = false;
        say(text);
        var row = upload.closest(".row");
        var error = document.getElementById("upload-error") || el("p", "field-error");
        error.id = "upload-error";
        error.textContent = text;
        if (row && !error.parentElement) row.insertBefore(error, upload.nextSibling);
        upload.setAttribute("aria-invalid", "true");
        upload.setAttribute("aria-describedby", "upload-error upload-hint");
        upload.focus();
      }
      function next() {
        if (index >= files.length) {
          upload.value = "";
          dirty = false;
          if (form.requestSubmit && button) form.requestSubmit(button); else form.submit();
          return;
        }
        var file = files[index++];
        say("Uploading " + file.name + " (" + index + " of " + files.length + ")…");
        var data = new FormData();
        data.append("_csrf", csrf);
        data.append("file", file, file.name);
        var xhr = new XMLHttpRequest();
        xhr.open("POST", "/dashboard/library/upload");
        xhr.setRequestHeader("x-requested-with", "fetch");
        xhr.setRequestHeader("accept", "application/json");
        xhr.onload = function () {
          var answer = null;
          try { answer = JSON.parse(xhr.responseText); } catch (err) { answer = null; }
          if (xhr.status >= 200 && xhr.status < 300 && answer && answer.id) {
            var ticked = document.createElement("input");
            ticked.type = "hidden";
            ticked.name = "pick";
            ticked.value = answer.id;
            form.appendChild(ticked);
            if (answer.reused) {
              // The library already held this file: the page that comes back says the post uses that image.
              var reused = document.createElement("input");
              reused.type = "hidden";
              reused.name = "reused";
              reused.value = answer.id;
              form.appendChild(reused);
            }
            next();
          } else {
            fail(file.name + ": " + (answer && answer.message ? answer.message : xhr.responseText || "the upload failed."));
          }
        };
        xhr.onerror = function () { fail("The upload failed; check the connection and try again."); };
        xhr.send(data);
      }
      next();
    });
    window.addEventListener("beforeunload", function (e) {
      if (!dirty) return;
      e.preventDefault();
      e.returnValue = "";
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form[data-composer]").forEach(setupComposer);
    document.querySelectorAll(".net-tabs[data-tabs]").forEach(setupTabs);
  });
})();
`;
