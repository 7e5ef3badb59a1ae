console.log("worksync")
