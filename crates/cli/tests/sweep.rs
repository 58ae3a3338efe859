//! `flashlab sweep`: points planned and checked, run all at once or one
//! by one with byte-identical results, resumed without redoing a point,
//! a failing point named while the others complete, and collected.

mod common;
use common::{flashlab, Scratch};
use std::path::Path;

const SWEEP: &str = r#"
[base]
device = "p420m"
scale = 1024
workload = "4k-write"
duration = 0.2

[axes]
workload = ["4k-write", "64k-seq-write"]
"controller.program_path_bytes_per_sec" = [500e6, 740e6, 1000e6]
"#;

fn sweep_file(dir: &Path, text: &str) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let f = dir.join("s.toml");
    std::fs::write(&f, text).unwrap();
    f.to_str().unwrap().to_string()
}

fn points(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("point-") && n.ends_with(".json"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_sweep_runs_all_at_once_or_point_by_point_alike_and_resumes() {
    let d = Scratch::new("sweep");
    let file = sweep_file(&d, SWEEP);
    let (code, out, err) = flashlab(&["sweep", "plan", &file]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("6 points") && out.contains("controller.program_path_bytes_per_sec=1000000000.0 workload=64k-seq-write"), "{out}");

    let (all, one) = (d.join("all"), d.join("one"));
    let (code, out, err) = flashlab(&["sweep", "run", &file, "--out", all.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("6 points: 6 run now, 0 done before, 0 failed"), "{out}");
    for i in 0..6 {
        let (code, _, err) = flashlab(&["sweep", "run", &file, "--out", one.to_str().unwrap(), "--index", &i.to_string()]);
        assert_eq!(code, 0, "{err}");
    }
    assert_eq!(points(&all).len(), 6);
    for p in points(&all) {
        assert!(std::fs::read(all.join(&p)).unwrap() == std::fs::read(one.join(&p)).unwrap(), "{p} differs between --jobs 2 and --index");
    }
    // Resumed: nothing done twice; a lost point is run again, alone.
    let (_, out, _) = flashlab(&["sweep", "run", &file, "--out", all.to_str().unwrap()]);
    assert!(out.contains("0 run now, 6 done before"), "{out}");
    std::fs::remove_file(all.join("point-00004.json")).unwrap();
    let (_, out, _) = flashlab(&["sweep", "run", &file, "--out", all.to_str().unwrap()]);
    assert!(out.contains("1 run now, 5 done before"), "{out}");
    assert!(std::fs::read(all.join("point-00004.json")).unwrap() == std::fs::read(one.join("point-00004.json")).unwrap());

    let (code, out, err) = flashlab(&["sweep", "collect", all.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let c: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(all.join("sweep.json")).unwrap()).unwrap();
    let rows = c["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "{out}");
    // A faster program path writes faster, for each workload.
    let iops = |i: usize| rows[i]["iops"].as_f64().unwrap();
    assert!(iops(0) < iops(2) && iops(2) < iops(4) && iops(1) < iops(5), "{out}");
    for f in ["iops-by-workload.svg", "latency-by-controller-program_path_bytes_per_sec.svg", "wa-by-workload.svg"] {
        assert!(all.join(f).is_file(), "{f} missing");
    }
    // Another sweep into the same directory is refused.
    let other = sweep_file(&d.join("other"), &SWEEP.replace("0.2", "0.3"));
    let (code, _, err) = flashlab(&["sweep", "run", &other, "--out", all.to_str().unwrap()]);
    assert!(code == 2 && err.contains("holds another sweep's results"), "{err}");
}

#[test]
fn a_failing_point_is_named_and_the_others_complete() {
    let d = Scratch::new("sweep-fail");
    let file = sweep_file(&d, SWEEP);
    let out_dir = d.join("out");
    // Point 1's results file cannot be written: a directory is in its way.
    std::fs::create_dir_all(out_dir.join("point-00001.json")).unwrap();
    let (code, out, err) = flashlab(&["sweep", "run", &file, "--out", out_dir.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("5 run now, 0 done before, 1 failed") && err.contains("1 point(s) failed: 1 ("), "{out}{err}");
    let (code, _, err) = flashlab(&["sweep", "collect", out_dir.to_str().unwrap()]);
    assert!(code == 2 && err.contains("5 of 6 points collected") && err.contains("failed: 1 ("), "{err}");
    // A bad sweep is refused before anything runs, naming its point.
    let bad = sweep_file(&d.join("bad"), &SWEEP.replace("1000e6", "1.0"));
    let (code, _, err) = flashlab(&["sweep", "run", &bad, "--out", d.join("bad-out").to_str().unwrap()]);
    assert!(code == 2 && err.contains("point 4: profile p420m: controller.program_path_bytes_per_sec = 1: must be in"), "{err}");
    assert!(points(&d.join("bad-out")).is_empty());
}

/// A single-node Slurm of the test's own (Debian's munge, slurmctld and
/// slurmd), configured in a scratch directory on its own ports; stopped
/// when dropped.
struct Slurm {
    daemons: Vec<std::process::Child>,
    conf: std::path::PathBuf,
}

impl Slurm {
    fn start(dir: &Path) -> Slurm {
        use std::process::{Command, Stdio};
        for (t, p) in [("munged", "munge"), ("slurmctld", "slurmctld"), ("slurmd", "slurmd"), ("sbatch", "slurm-client"), ("sinfo", "slurm-client")] {
            common::tool(t, p);
        }
        std::fs::create_dir_all(dir.join("state")).unwrap();
        std::fs::create_dir_all(dir.join("spool")).unwrap();
        let key = dir.join("munge.key");
        std::fs::write(&key, (0..1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8 ^ std::process::id() as u8).collect::<Vec<u8>>()).unwrap();
        Command::new("chmod").arg("400").arg(&key).status().unwrap();
        let sock = dir.join("munge.sock");
        let spawn = |cmd: &mut Command| cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let mut daemons = vec![spawn(
            Command::new("munged")
                .args(["-F", "--force"])
                .arg(format!("--key-file={}", key.display()))
                .arg(format!("--socket={}", sock.display()))
                .arg(format!("--pid-file={}", dir.join("munged.pid").display()))
                .arg(format!("--log-file={}", dir.join("munged.log").display()))
                .arg(format!("--seed-file={}", dir.join("munged.seed").display())),
        )];
        let host = String::from_utf8(Command::new("hostname").arg("-s").output().unwrap().stdout).unwrap().trim().to_string();
        let port = 20000 + std::process::id() % 20000;
        let d = dir.display();
        let conf = format!(
            "ClusterName=flashlab\nSlurmctldHost={host}(127.0.0.1)\nAuthType=auth/munge\nAuthInfo=socket={d}/munge.sock\nCredType=cred/munge\n\
             SlurmUser=root\nSlurmdUser=root\nSlurmctldPort={port}\nSlurmdPort={}\nStateSaveLocation={d}/state\nSlurmdSpoolDir={d}/spool\n\
             SlurmctldPidFile={d}/slurmctld.pid\nSlurmdPidFile={d}/slurmd.pid\nSlurmctldLogFile={d}/slurmctld.log\nSlurmdLogFile={d}/slurmd.log\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\nSelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core_Memory\nReturnToService=2\nMpiDefault=none\nNodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=2000 State=UNKNOWN\n\
             PartitionName=flashlab Nodes={host} Default=YES MaxTime=INFINITE State=UP\n",
            port + 1
        );
        let conf_path = dir.join("slurm.conf");
        std::fs::write(&conf_path, conf).unwrap();
        for _ in 0..100 {
            if sock.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        daemons.push(spawn(Command::new("slurmctld").arg("-D").arg("-f").arg(&conf_path)));
        daemons.push(spawn(Command::new("slurmd").arg("-D").arg("-f").arg(&conf_path)));
        let s = Slurm { daemons, conf: conf_path };
        for _ in 0..300 {
            let o = Command::new("sinfo").args(["-h", "-o", "%t"]).env("SLURM_CONF", &s.conf).output().unwrap();
            if String::from_utf8_lossy(&o.stdout).trim() == "idle" {
                return s;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("Slurm's node is not idle after 30 s: {}", std::fs::read_to_string(dir.join("slurmctld.log")).unwrap_or_default());
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        for d in self.daemons.iter_mut().rev() {
            let _ = std::process::Command::new("kill").args(["-TERM", &d.id().to_string()]).status();
            let _ = d.wait();
        }
    }
}

#[test]
fn a_sweep_on_slurm_as_a_job_array_gives_the_local_results_byte_for_byte() {
    let d = Scratch::new("sweep-slurm");
    let file = sweep_file(&d, &SWEEP.replace("[500e6, 740e6, 1000e6]", "[400e6, 600e6, 800e6, 1000e6]"));
    let slurm = Slurm::start(&d.join("slurm"));
    let (on_slurm, local) = (d.join("slurm-out"), d.join("local"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["sweep", "slurm", &file, "--out", on_slurm.to_str().unwrap(), "--submit", "--wait", "--partition", "flashlab"])
        .env("SLURM_CONF", &slurm.conf)
        .output()
        .unwrap();
    let mut said = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    for e in std::fs::read_dir(&on_slurm).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().starts_with("slurm-")) {
        said += &format!("\n{}: {}", e.file_name().to_string_lossy(), std::fs::read_to_string(e.path()).unwrap_or_default());
    }
    assert!(o.status.success(), "{said}");
    assert!(said.contains("a job array of 8 tasks") && said.contains("Submitted batch job"), "{said}");
    let script = std::fs::read_to_string(on_slurm.join("sweep.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-7") && script.contains("--index \"$SLURM_ARRAY_TASK_ID\""), "{script}");
    let (code, _, err) = flashlab(&["sweep", "run", &file, "--out", local.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(points(&on_slurm).len(), 8, "{said}");
    for p in points(&local) {
        assert!(std::fs::read(on_slurm.join(&p)).unwrap() == std::fs::read(local.join(&p)).unwrap(), "{p} differs between Slurm and --jobs 2");
    }
    let (code, _, err) = flashlab(&["sweep", "collect", on_slurm.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn the_kubernetes_job_is_an_indexed_job_whose_pods_run_the_points() {
    let d = Scratch::new("sweep-k8s");
    let file = sweep_file(&d, SWEEP);
    let out = d.join("volume");
    let (code, _, err) = flashlab(&["sweep", "k8s", &file, "--out", out.to_str().unwrap(), "--image", "registry.example/flashlab:0.1", "--parallelism", "4"]);
    assert_eq!(code, 0, "{err}");
    let job: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("sweep-job.json")).unwrap()).unwrap();
    assert_eq!((job["apiVersion"].as_str(), job["kind"].as_str()), (Some("batch/v1"), Some("Job")));
    let name = job["metadata"]["name"].as_str().unwrap();
    assert!(name.len() <= 63 && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "not a DNS label: {name}");
    let spec = &job["spec"];
    assert_eq!((spec["completionMode"].as_str(), spec["completions"].as_u64(), spec["parallelism"].as_u64()), (Some("Indexed"), Some(6), Some(4)));
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert!(pod["activeDeadlineSeconds"].as_u64().unwrap() > 0);
    let c = &pod["containers"][0];
    assert_eq!(c["image"], "registry.example/flashlab:0.1");
    assert_eq!(c["env"][0]["name"], "JOB_COMPLETION_INDEX");
    assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"], "metadata.annotations['batch.kubernetes.io/job-completion-index']");
    assert_eq!(c["resources"]["requests"]["memory"], c["resources"]["limits"]["memory"]);
    let mount = c["volumeMounts"][0]["mountPath"].as_str().unwrap();
    assert_eq!(pod["volumes"][0]["name"], c["volumeMounts"][0]["name"]);
    // Each pod's command, run here for two indices: the volume is `out`,
    // `$(JOB_COMPLETION_INDEX)` what Kubernetes expands it to.
    let local = d.join("local");
    let (code, _, err) = flashlab(&["sweep", "run", &file, "--out", local.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    for index in ["0", "5"] {
        let argv: Vec<String> = c["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().replace("$(JOB_COMPLETION_INDEX)", index).replacen(mount, out.to_str().unwrap(), 1))
            .collect();
        assert_eq!(argv[0], "flashlab");
        let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
        let (code, _, err) = flashlab(&args);
        assert_eq!(code, 0, "{argv:?}: {err}");
        let p = format!("point-0000{index}.json");
        assert!(std::fs::read(out.join(&p)).unwrap() == std::fs::read(local.join(&p)).unwrap(), "{p} differs");
    }
    assert_eq!(points(&out).len(), 2);
}

#[test]
fn a_killed_sweep_resumes_without_redoing_a_finished_point() {
    let d = Scratch::new("sweep-kill");
    let file = sweep_file(&d, &SWEEP.replace("scale = 1024", "scale = 128").replace("duration = 0.2", "duration = 1.0"));
    let out = d.join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["sweep", "run", &file, "--out", out.to_str().unwrap(), "--jobs", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    while !out.join("point-00000.json").exists() {
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before its first point was written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let done = points(&out);
    assert!(!done.is_empty() && done.len() < 6, "{done:?}");
    for p in &done {
        serde_json::from_str::<serde_json::Value>(&std::fs::read_to_string(out.join(p)).unwrap()).unwrap_or_else(|e| panic!("{p} half written: {e}"));
    }
    let before: Vec<Vec<u8>> = done.iter().map(|p| std::fs::read(out.join(p)).unwrap()).collect();
    let (code, said, err) = flashlab(&["sweep", "run", &file, "--out", out.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(said.contains(&format!("{} run now, {} done before", 6 - done.len(), done.len())), "{said}");
    for (p, b) in done.iter().zip(before) {
        assert!(std::fs::read(out.join(p)).unwrap() == b, "{p} was run again");
    }
}

#[test]
fn ctrl_c_stops_a_sweep_without_marking_the_point_under_way_failed() {
    let d = Scratch::new("sweep-int");
    // Points of many rounds, one at a time: the stop comes just after the
    // first point is written, early in the second (a stop in a point's
    // last round would let it finish whole, which is right but not this test).
    let file = sweep_file(&d, &SWEEP.replace("scale = 1024", "scale = 64").replace("duration = 0.2", "duration = 20.0"));
    let out = d.join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_flashlab"))
        .args(["sweep", "run", &file, "--out", out.to_str().unwrap(), "--jobs", "1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while !out.join("point-00000.json").exists() {
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before its first point was written");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // Point 0's bookkeeping done and point 1 taken (a point runs for
    // hundreds of milliseconds): the stop lands in point 1.
    std::thread::sleep(std::time::Duration::from_millis(50));
    std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("point 1 stopped: it runs again on the next `sweep run`"), "{err}");
    assert_eq!(points(&out), ["point-00000.json"], "{err}");
    let errors: Vec<_> = std::fs::read_dir(&out).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().ends_with(".error")).collect();
    assert!(errors.is_empty(), "a stopped point was marked failed");
}

#[test]
fn a_review_sweep_gives_each_point_what_the_review_alone_gives() {
    let d = Scratch::new("sweep-review");
    let file =
        sweep_file(&d, "[base]\nprocedure = \"review\"\ndevice = \"p420m\"\nscale = 1024\nprofiles = [\"4k\"]\n\n[axes]\ndevice = [\"p420m\", \"mx6300\"]\n");
    let out = d.join("out");
    let (code, _, err) = flashlab(&["sweep", "run", &file, "--out", out.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    let (code, table, err) = flashlab(&["sweep", "collect", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(table.contains("device=mx6300 (4k 4K write)") && table.contains("device=p420m (4k 4K read)"), "{table}");
    let c: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let review_dir = d.join("review");
    let (code, _, err) = flashlab(&["review", "mx6300", "--scale", "1024", "--profiles", "4k", "--out", review_dir.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(review_dir.join("results.json")).unwrap()).unwrap();
    let alone = &r["jobs"][0]["tests"][0]["summary"]["all"]["iops"];
    let row = c["rows"].as_array().unwrap().iter().find(|row| row["settings"]["device"] == "mx6300" && row["test"] == "4k 4K write").unwrap();
    assert_eq!(&row["iops"], alone, "the sweep's point differs from the review alone");
}

/// A host axis: each point's card on its host, as `run --host` runs it,
/// the point's results naming the host.
#[test]
fn a_host_axis_runs_each_point_on_its_host_as_run_does() {
    let d = Scratch::new("sweep-host");
    let base = "[base]\ndevice = \"p420m\"\nscale = 1024\nworkload = \"4k-read\"\nduration = 0.2\n";
    let file = sweep_file(&d, &format!("{base}\n[axes]\nhost = [\"linux\", \"windows\"]\n"));
    let out = d.join("out");
    let (code, _, err) = flashlab(&["sweep", "run", &file, "--out", out.to_str().unwrap(), "--jobs", "2"]);
    assert_eq!(code, 0, "{err}");
    let point = |i: usize| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(out.join(&points(&out)[i])).unwrap()).unwrap() };
    let json = d.join("run.json");
    let (code, _, err) = flashlab(&[
        "run",
        "p420m",
        "--host",
        "windows",
        "--scale",
        "1024",
        "--workload",
        "4k-read",
        "--duration",
        "0.2",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let alone: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let windows = point(1);
    assert!(windows.to_string().contains("\"host\":\"windows-2008r2\""), "{windows}");
    assert!(point(0).to_string().contains("\"host\":\"linux-centos6\""));
    let iops = |v: &serde_json::Value| v.to_string().split("\"iops\":").nth(1).map(|s| s.split(',').next().unwrap().to_string());
    assert_eq!(iops(&windows), iops(&alone), "the point and run --host windows alone");
    let bad = sweep_file(&d.join("bad"), &format!("{base}\n[axes]\nhost = [\"solaris\"]\n"));
    let (code, _, err) = flashlab(&["sweep", "plan", &bad]);
    assert!(code != 0 && err.contains("solaris") && err.contains("windows-2008r2"), "{err}");
}
