document.getElementById("main").textContent = "console";
