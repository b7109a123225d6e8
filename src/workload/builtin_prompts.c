/* builtin_prompts: the data behind servelab's built-in workload: three classes
 * (short, medium, long) of realistic chat and instruction prompts, so a load
 * test can run against any server with no dataset to download. The texts are
 * original and plain ASCII; each class states the prompt token range its texts
 * fall in (by the rule in model/tokens.h) and the output range it asks for.
 * tests/workload/t3120-builtin-prompts.c checks every range, count and uniqueness claim. */
#include "workload/builtin_prompts.h"

#include <stddef.h>

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The prompt text below is laid out by hand (one string piece per line of the
 * original text); keep clang-format from reflowing it. */
/* clang-format off */

/* System messages shared by several prompts. */
#define SYS_CONCISE "You are a concise assistant. Answer in a few sentences at most."

/* short: 10-80 prompt tokens; quick questions, one-line rewrites, definitions. */
static const builtin_prompt short_prompts[] = {
    {NULL,
     "What is the difference between a process and a thread? Answer in two or three sentences."},
    {NULL,
     "Rewrite this sentence so it sounds professional: \"hey, the report's gonna be late again, "
     "sorry, stuff came up.\""},
    {SYS_CONCISE,
     "Define \"idempotent\" as the word is used for HTTP methods, and name one method that is "
     "not idempotent."},
    {NULL,
     "Give me three name ideas for a small neighborhood bakery that specializes in rye bread."},
    {NULL,
     "Write a short, polite reply declining this: \"Hi Sam, can you join the vendor review call "
     "on Thursday at 3pm?\" I have a conflict but can send my notes beforehand."},
    {NULL,
     "How many minutes should I boil a large egg, starting in boiling water, to get a jammy yolk?"},
    {NULL, "Convert 72 degrees Fahrenheit to Celsius and show the formula you used."},
    {NULL, "What does the Linux command `chmod 640 notes.txt` do? Explain each digit."},
    {NULL,
     "Translate into Spanish and into German: \"Where is the nearest train station, please?\""},
    {NULL, "Is 391 a prime number? Explain briefly how you checked."},
    {NULL, "Write a haiku about a server rack humming in an empty data center at night."},
    {NULL, "What is the capital of Australia, and why isn't it Sydney or Melbourne?"},
    {NULL,
     "Suggest a short, friendly subject line for an email inviting my team to lunch on Friday."},
    {"You are a helpful writing assistant. Return only the corrected text.",
     "Fix the grammar: \"Me and him was going to the store when it start raining real hard.\""},
    {NULL,
     "In Python, how do I get a reversed copy of a list without modifying the original list?"},
    {NULL, "Explain what a p-value is to someone who has never taken a statistics class."},
    {NULL, "What's a good substitute for buttermilk in pancakes if I only have regular milk?"},
    {NULL, "List four things I should check before a long road trip in a twelve-year-old car."},
    {NULL, "Summarize the plot of Romeo and Juliet in a single sentence."},
    {SYS_CONCISE, "What is the time complexity of binary search on a sorted array, and why?"},
    {NULL, "Give me one git command that undoes my last commit but keeps its changes staged."},
    {NULL,
     "What does DNS stand for, and what does it actually do when I type a web address? Use plain "
     "words."},
    {"You answer with a single word or number whenever possible.",
     "How many sides does a dodecagon have?"},
    {NULL,
     "Write a two-sentence product description for a stainless steel water bottle that keeps "
     "drinks cold for 24 hours."},
    {NULL,
     "What's the difference between \"affect\" and \"effect\"? Give one example sentence for "
     "each."},
    {NULL,
     "Suggest a stretching routine for someone who sits at a desk all day. Keep it to five moves "
     "or fewer."},
    {NULL, "How much is a 15% tip on a $84.60 restaurant bill, and what is the total?"},
    {SYS_CONCISE, "In SQL, what's the difference between WHERE and HAVING?"},
    {NULL,
     "Draft a quick Slack message telling my team the staging deploy is paused until the "
     "database migration finishes."},
    {NULL,
     "What are your top three packing tips for a carry-on-only week in Japan in late autumn?"},
    {"You are a friendly support agent for a meal-kit delivery company. Keep replies under 80 "
     "words.",
     "A customer writes: \"My box came a day late and the ice packs were completely melted.\" "
     "Reply to them."},
    {NULL, "Why is the sky blue during the day but red and orange at sunset? Keep it short."},
};

/* medium: 150-500 prompt tokens; a paragraph, a function, a log or a spec plus a task. */
static const builtin_prompt medium_prompts[] = {
    {NULL,
     "Summarize the following paragraph in three bullet points for a general audience:\n\n"
     "Coral bleaching happens when corals under stress expel the tiny algae that live inside "
     "their tissues. Those algae, called zooxanthellae, supply most of the coral's food through "
     "photosynthesis and also give reefs their color, so when they leave, the coral turns pale "
     "and starts to starve. The most common trigger is water that stays one or two degrees "
     "Celsius above the usual summer maximum for several weeks, but pollution, very low tides, "
     "and sudden changes in salinity can cause it too. Bleached coral is not dead: if "
     "temperatures return to normal quickly, the algae can recolonize the tissue and the coral "
     "recovers over a few months. If the stress lasts too long, the coral dies and is soon "
     "covered by seaweed, which makes it harder for new coral larvae to settle. Because mass "
     "bleaching events are now arriving every few years instead of every few decades, many reefs "
     "no longer have enough time to recover between them."},
    {NULL,
     "Review this Python function. Point out bugs and edge cases, then show a corrected "
     "version.\n\n"
     "```python\n"
     "from datetime import datetime\n\n"
     "def days_until(deadline_str, today=datetime.now()):\n"
     "    \"\"\"Return how many whole days remain until the deadline (YYYY-MM-DD).\"\"\"\n"
     "    deadline = datetime.strptime(deadline_str, \"%Y-%d-%m\")\n"
     "    delta = deadline - today\n"
     "    if delta.days < 0:\n"
     "        return \"overdue\"\n"
     "    return delta.days\n"
     "```\n\n"
     "It is called from a nightly job like `days_until(task[\"due\"])` and the result is shown "
     "in an email as \"3 days left\"."},
    {NULL,
     "Our Python service started failing after a routine deploy. Here is the log. What is most "
     "likely wrong, and what should I check first?\n\n"
     "```\n"
     "2024-03-11 09:14:02,118 INFO  app.startup: loading config from /etc/orders/config.yaml\n"
     "2024-03-11 09:14:02,120 INFO  app.db: connecting to postgres host=db-primary.internal "
     "port=5433 db=orders\n"
     "2024-03-11 09:14:07,125 WARNING app.db: connection attempt 1 failed: timeout after 5.0s\n"
     "2024-03-11 09:14:12,131 WARNING app.db: connection attempt 2 failed: timeout after 5.0s\n"
     "2024-03-11 09:14:17,140 ERROR app.db: connection attempt 3 failed: timeout after 5.0s\n"
     "Traceback (most recent call last):\n"
     "  File \"/srv/orders/app/db.py\", line 41, in connect\n"
     "    conn = psycopg2.connect(dsn, connect_timeout=5)\n"
     "psycopg2.OperationalError: connection to server at \"db-primary.internal\" (10.0.4.12), "
     "port 5433 failed: timeout expired\n"
     "2024-03-11 09:14:17,141 CRITICAL app.startup: database unavailable, exiting with status 3\n"
     "```\n\n"
     "The previous version of the config used port 5432. Other services can reach the database "
     "fine."},
    {"You are a customer support specialist for an online furniture store. Be warm, clear and "
     "specific.",
     "Draft a reply to this customer message:\n\n"
     "\"Hello, I returned the oak side table (order #48213) on February 2nd using your prepaid "
     "label. The tracking says your warehouse received it on February 6th, but it has now been "
     "almost four weeks and I still have not seen the refund of $189 on my card. I have emailed "
     "twice and only got automatic replies. I am honestly losing patience and I am considering "
     "disputing the charge with my bank. Can someone please tell me what is going on?\"\n\n"
     "Internal notes: the return was received and inspected on Feb 9 and approved, but the "
     "refund was stuck because of a payment processor error that has since been fixed. Refunds "
     "are being reissued today and should show within 3 to 5 business days. We are allowed to "
     "offer a $25 store credit as an apology."},
    {NULL,
     "Here is the product spec for a new smart plant pot. Write a 120-word product page "
     "description and five short bullet points for the feature list.\n\n"
     "Product: Verda Pot (model VP-2)\n"
     "- Self-watering reservoir: 1.2 liters, lasts about 3 weeks for most houseplants\n"
     "- Soil moisture and light sensors, reading every 15 minutes\n"
     "- Companion app (iOS and Android) sends a notification when the reservoir is low or the "
     "plant needs more light\n"
     "- Built-in database of 400 common houseplants with recommended moisture levels\n"
     "- USB-C rechargeable battery, about 4 months per charge\n"
     "- Matte ceramic outer shell, available in white, sage, and charcoal\n"
     "- Diameter 18 cm, height 20 cm\n"
     "- Price: $79; launch discount 15% for the first month\n"
     "Target customer: busy city apartment dwellers who keep killing their plants."},
    {NULL,
     "This query takes about 40 seconds on our PostgreSQL database and is run on every dashboard "
     "load. How can I make it faster?\n\n"
     "```sql\n"
     "SELECT c.name, COUNT(o.id) AS orders, SUM(o.total) AS revenue\n"
     "FROM customers c\n"
     "LEFT JOIN orders o ON o.customer_id = c.id\n"
     "WHERE to_char(o.created_at, 'YYYY-MM') = '2024-02'\n"
     "  AND lower(c.country) = 'canada'\n"
     "GROUP BY c.name\n"
     "ORDER BY revenue DESC\n"
     "LIMIT 20;\n"
     "```\n\n"
     "The orders table has about 30 million rows and an index on (customer_id). The customers "
     "table has 2 million rows and no indexes besides the primary key. Also, is the LEFT JOIN "
     "doing what I think it is?"},
    {NULL,
     "Please rewrite this internal announcement so it is shorter, clearer, and less defensive. "
     "Keep all the facts.\n\n"
     "\"Hi all, as some of you may have already heard through various channels, and as we have "
     "been discussing in several meetings over the last few weeks, we have made the difficult "
     "decision, after a lot of careful consideration of many different factors, to move the "
     "weekly all-hands meeting from Monday morning to Wednesday afternoon at 2pm, starting from "
     "the week of the 15th. We know that this might not work perfectly for everyone and we want "
     "to acknowledge that change is hard, but we believe that on balance this is the best "
     "option, since Monday mornings were often taken up by urgent issues from the weekend and a "
     "lot of people were joining late or not at all. The meeting will still be recorded as "
     "before for those who cannot attend, and the recording will still be posted in the usual "
     "place. Please let your manager know if this causes any serious problems for you.\""},
    {NULL,
     "Find the bug in this C function and explain why it can crash. Suggest a safe "
     "replacement.\n\n"
     "```c\n"
     "#include <string.h>\n"
     "#include <stdlib.h>\n\n"
     "/* Returns a newly allocated \"first last\" string. */\n"
     "char *full_name(const char *first, const char *last) {\n"
     "    size_t n = strlen(first) + strlen(last);\n"
     "    char *out = malloc(n);\n"
     "    strcpy(out, first);\n"
     "    strcat(out, \" \");\n"
     "    strcat(out, last);\n"
     "    return out;\n"
     "}\n"
     "```\n\n"
     "It is called with names read from a CSV file, and occasionally the program aborts with "
     "\"malloc(): corrupted top size\"."},
    {NULL,
     "I want to scale this recipe from 4 servings to 10 and convert everything to grams where it "
     "makes sense. Also tell me if anything should not be scaled linearly.\n\n"
     "Weeknight chickpea curry (serves 4)\n"
     "- 2 tablespoons olive oil\n"
     "- 1 large onion, diced\n"
     "- 3 cloves garlic, minced\n"
     "- 1 tablespoon grated ginger\n"
     "- 2 tablespoons curry powder\n"
     "- 1 teaspoon ground cumin\n"
     "- 1/2 teaspoon chili flakes\n"
     "- 2 cans (400 g each) chickpeas, drained\n"
     "- 1 can (400 ml) coconut milk\n"
     "- 1 can (400 g) chopped tomatoes\n"
     "- 2 cups fresh spinach\n"
     "- 1 teaspoon salt, plus more to taste\n"
     "- Juice of half a lime\n"
     "Cook the onion in the oil for 8 minutes, add garlic, ginger and spices for 1 minute, then "
     "add the rest except the spinach and lime and simmer 20 minutes. Stir in spinach and lime "
     "at the end."},
    {"You are a patient math tutor. Show each step and check the answer at the end.",
     "Help me solve this word problem. I keep getting a negative number and I don't know why.\n\n"
     "A chemist has 10 liters of a solution that is 30% acid. She wants to add pure acid to it "
     "so that the result is 50% acid. How many liters of pure acid should she add?\n\n"
     "My attempt: I wrote 0.3 * 10 + x = 0.5 * 10, so 3 + x = 5 and x = 2. Then I checked it: 3 "
     "+ 2 = 5 liters of acid out of 12 liters total, which is about 41.7%, not 50%. Then I tried "
     "0.3 * 10 + 0.5 * x = x and got x = -6, which makes no sense. Where am I going wrong?"},
    {NULL,
     "Plan a relaxed three-day itinerary for Kyoto using these constraints:\n"
     "- Two adults in their sixties, one of whom can walk about 6 km a day comfortably, with "
     "rests.\n"
     "- Arriving by train at Kyoto Station at 2pm on day 1; leaving at 5pm on day 3.\n"
     "- Interests: gardens, temples, traditional crafts, good vegetarian food. Not interested in "
     "nightlife.\n"
     "- They would like to avoid the biggest crowds if possible, and are happy to start early.\n"
     "- Hotel is near Shijo Karasuma. Budget for taxis is fine for short hops.\n"
     "For each day give a morning, afternoon and evening plan with rough travel times, and one "
     "backup idea in case of rain."},
    {NULL,
     "Can you check my unit economics for a subscription box business and tell me whether it is "
     "viable?\n\n"
     "- Price: $34 per month\n"
     "- Product cost per box: $13.50\n"
     "- Packaging: $1.80 per box\n"
     "- Shipping: $6.20 per box\n"
     "- Payment processing: 3% of the price\n"
     "- Customer acquisition cost: about $48 per new subscriber, mostly paid social ads\n"
     "- Average monthly churn: 11%\n"
     "- Fixed costs: $9,000 per month (rent, software, one part-time employee)\n"
     "- Current subscribers: 620\n\n"
     "Please compute the contribution margin per box, the approximate customer lifetime value, "
     "the LTV to CAC ratio, and how many subscribers I need to break even each month. Then give "
     "me two or three levers that would matter most."},
    {NULL,
     "Explain what this Dockerfile does line by line, and suggest improvements for image size, "
     "build speed and security.\n\n"
     "```dockerfile\n"
     "FROM python:3.11\n"
     "WORKDIR /app\n"
     "COPY . .\n"
     "RUN pip install -r requirements.txt\n"
     "RUN apt-get update && apt-get install -y curl vim\n"
     "ENV DEBUG=true\n"
     "EXPOSE 8000\n"
     "CMD python manage.py runserver 0.0.0.0:8000\n"
     "```\n\n"
     "It is used for a Django app that we deploy to production on a small Kubernetes cluster. "
     "The image is currently about 1.3 GB, and every small code change makes CI reinstall all "
     "the Python dependencies, which takes around six minutes."},
    {NULL,
     "Review this Kubernetes Deployment. What would you change before running it in "
     "production?\n\n"
     "```yaml\n"
     "apiVersion: apps/v1\n"
     "kind: Deployment\n"
     "metadata:\n"
     "  name: thumbnailer\n"
     "spec:\n"
     "  replicas: 1\n"
     "  selector:\n"
     "    matchLabels:\n"
     "      app: thumbnailer\n"
     "  template:\n"
     "    metadata:\n"
     "      labels:\n"
     "        app: thumbnailer\n"
     "    spec:\n"
     "      containers:\n"
     "        - name: thumbnailer\n"
     "          image: registry.example.com/thumbnailer:latest\n"
     "          ports:\n"
     "            - containerPort: 8080\n"
     "          env:\n"
     "            - name: S3_SECRET_KEY\n"
     "              value: \"abc123-please-change\"\n"
     "```\n\n"
     "The service resizes user-uploaded images and gets traffic spikes when newsletters go out."},
    {NULL,
     "Give me honest, specific feedback on the opening paragraph of my cover letter for a junior "
     "data analyst job. Then suggest a stronger version.\n\n"
     "\"Dear Hiring Manager, My name is Priya and I am writing to apply for the Junior Data "
     "Analyst position that I saw on your website. I am a very hard-working and passionate "
     "person who loves data and numbers. I recently graduated with a degree in economics and I "
     "have always been interested in analytics. I think I would be a great fit for your company "
     "because I am a fast learner and a team player, and I am very excited about the opportunity "
     "to grow my skills in a dynamic environment.\"\n\n"
     "For context, during my degree I built a dashboard in Excel and Power BI for a local food "
     "bank that cut their monthly reporting time from two days to three hours."},
    {NULL,
     "I measured the period of a simple pendulum for different string lengths in a school lab. "
     "Can you tell me whether the data supports T = 2 * pi * sqrt(L / g), estimate g from it, "
     "and explain possible sources of error?\n\n"
     "| Length L (m) | Time for 10 swings (s) |\n"
     "|--------------|------------------------|\n"
     "| 0.20         | 9.1                    |\n"
     "| 0.40         | 12.6                   |\n"
     "| 0.60         | 15.6                   |\n"
     "| 0.80         | 18.0                   |\n"
     "| 1.00         | 20.1                   |\n\n"
     "I timed each length once with a phone stopwatch, and the swings started from roughly 30 "
     "degrees."},
    {NULL,
     "Based on this job description, write eight interview questions: four technical and four "
     "behavioral. For each, add one sentence on what a strong answer would include.\n\n"
     "Site Reliability Engineer (mid-level)\n"
     "We run a payments platform that processes about 2,000 requests per second at peak across "
     "three regions. You will join a team of six SREs responsible for availability, on-call, "
     "capacity planning and the deployment pipeline. Day to day you will improve our alerting "
     "(we have too many noisy pages), write automation in Go or Python, run game days, and lead "
     "incident reviews. Our stack: Kubernetes on a public cloud, PostgreSQL, Kafka, Prometheus "
     "and Grafana, Terraform. You should have run production systems on call for at least two "
     "years and be comfortable explaining tradeoffs to product teams."},
    {NULL,
     "What's wrong with this backup script? It ran fine for months and then last night it "
     "deleted everything in /srv.\n\n"
     "```bash\n"
     "#!/bin/bash\n"
     "BACKUP_DIR=$1\n"
     "DATE=$(date +%F)\n"
     "cd $BACKUP_DIR\n"
     "tar czf /mnt/nas/backup-$DATE.tar.gz .\n"
     "# keep only the last 7 days of archives\n"
     "find /mnt/nas -name \"backup-*\" -mtime +7 -exec rm {} \\;\n"
     "rm -rf $BACKUP_DIR/tmp/*\n"
     "```\n\n"
     "The cron entry is `0 2 * * * /usr/local/bin/backup.sh /srv/app`. Yesterday someone edited "
     "the crontab and I suspect the argument went missing. Explain what happened and rewrite the "
     "script defensively."},
    {NULL,
     "Turn these rough meeting notes into a clean list of decisions and action items with owners "
     "and due dates.\n\n"
     "notes - marketing sync tues\n"
     "- spring campaign: agreed to push launch from mar 4 to mar 18 bc landing page not ready "
     "(dev said 2 more wks)\n"
     "- jo to get final copy from agency by fri\n"
     "- budget: social ads capped at 12k for now, revisit after first 2 weeks of data\n"
     "- influencer thing - tom still waiting on 2 of 5 contracts, will chase, needs by next wed\n"
     "- newsletter: ana wants to A/B test subject lines, everyone ok, ana to set up\n"
     "- open q: do we do a print ad at all? no decision, lee to get a quote\n"
     "- next sync moved to thurs"},
    {NULL,
     "Explain what this regular expression matches, piece by piece, and give three strings that "
     "match and three that do not.\n\n"
     "```\n"
     "^(?=.*\\d)(?=.*[a-z])(?=.*[A-Z])[A-Za-z\\d@#$%^&+=!]{10,64}$\n"
     "```\n\n"
     "It is used to validate passwords on a sign-up form for a small online bookstore, and we "
     "get a steady trickle of support emails from people who say the form rejects passwords they "
     "consider perfectly strong. Is it a good password rule from a security point of view? What "
     "would you recommend instead?"},
    {NULL,
     "I ran eight user interviews about our expense-report app. Pull out the three or four most "
     "important insights and suggest one product change for each.\n\n"
     "Summary of what people said: Most people only open the app at the end of the month, when "
     "they have a pile of receipts, and several said they dread it. Six of eight take photos of "
     "receipts as they go but then forget which trip or client they belong to. Two people said "
     "the receipt scanner gets the amount wrong on crumpled thermal paper, so they now type "
     "everything by hand. Managers said approving reports is fine on desktop but painful on the "
     "phone because the receipt images are tiny. Three people mentioned that currency conversion "
     "for foreign trips is confusing, since the app uses the rate on the submission date, not "
     "the purchase date. Almost everyone liked the mileage tracker. One person said they would "
     "pay for the app personally if it also handled their freelance work."},
    {NULL,
     "Help me write a firm but polite email to my landlord. Facts:\n"
     "- The kitchen faucet has been leaking since January 12. I reported it by email on January "
     "13 and again on January 29.\n"
     "- On February 3 a plumber came, looked at it, and said a part needed to be ordered. Nobody "
     "has come back since.\n"
     "- The leak is getting worse and there is now a water stain on the cabinet floor; I am "
     "worried about mold.\n"
     "- My lease says non-emergency repairs should be done \"within a reasonable time, normally "
     "14 days\".\n"
     "- I have always paid rent on time and want to keep a good relationship.\n"
     "I want a specific date for the repair and I want them to check the cabinet for water "
     "damage. Keep it under 200 words."},
    {NULL,
     "I got this conflict when merging main into my feature branch. What do both sides do, and "
     "how should I resolve it so that neither change is lost?\n\n"
     "```\n"
     "def apply_discount(order):\n"
     "<<<<<<< HEAD\n"
     "    if order.customer.is_member:\n"
     "        rate = 0.10\n"
     "    else:\n"
     "        rate = 0.0\n"
     "    order.total = round(order.total * (1 - rate), 2)\n"
     "=======\n"
     "    rate = DISCOUNTS.get(order.coupon_code, 0.0)\n"
     "    order.total = order.total * (1 - rate)\n"
     "    order.discount_applied = rate > 0\n"
     ">>>>>>> main\n"
     "    return order\n"
     "```\n\n"
     "My branch added the member discount. Main added coupon codes. The business rule is that "
     "members get 10% and coupons stack on top, but the combined discount can never exceed 25%."},
    {NULL,
     "Compare these two one-day meal plans for someone trying to eat about 2,000 kcal with at "
     "least 100 g of protein. Estimate the calories and protein of each and say which is closer "
     "to the goal and how to fix the other.\n\n"
     "Plan A: breakfast of two eggs scrambled with spinach and one slice of whole-grain toast; "
     "lunch of a large chicken salad with olive oil dressing and a small roll; snack of an apple "
     "and 30 g of almonds; dinner of salmon fillet (150 g), half a cup of brown rice and roasted "
     "broccoli.\n\n"
     "Plan B: breakfast of a bowl of granola with whole milk and a banana; lunch of a cheese and "
     "tomato sandwich on white bread with a bag of chips; snack of a chocolate bar; dinner of a "
     "bowl of pasta with tomato sauce and parmesan, plus a glass of orange juice."},
    {"You are a physics teacher. Be encouraging but point out every mistake.",
     "Please check my solution.\n\n"
     "Problem: A ball is kicked from ground level at 20 m/s at an angle of 30 degrees above the "
     "horizontal. Ignoring air resistance and using g = 9.8 m/s^2, find the time of flight, the "
     "maximum height and the horizontal range.\n\n"
     "My solution:\n"
     "vx = 20 * sin(30) = 10 m/s, vy = 20 * cos(30) = 17.3 m/s.\n"
     "Time to top = vy / g = 17.3 / 9.8 = 1.77 s, so time of flight = 3.53 s.\n"
     "Max height = vy^2 / g = 299.3 / 9.8 = 30.5 m.\n"
     "Range = vx * t = 10 * 3.53 = 35.3 m."},
    {NULL,
     "Write a user-facing changelog entry for version 2.8.0 of our note-taking app from these "
     "commit messages. Group them under New, Improved and Fixed, skip purely internal changes, "
     "and use plain language.\n\n"
     "- feat(editor): add checklist blocks with drag to reorder\n"
     "- chore: bump eslint to 9.1\n"
     "- fix(sync): notes edited offline on two devices no longer overwrite each other silently; "
     "show conflict copy instead\n"
     "- perf(search): index note titles separately, search results 3x faster on large libraries\n"
     "- feat(share): export a notebook as a single PDF\n"
     "- refactor: move date helpers to utils/date.ts\n"
     "- fix(ios): keyboard no longer covers the last line when typing near the bottom\n"
     "- fix: crash when pasting an image larger than 20 MB\n"
     "- ci: cache node_modules between jobs"},
    {NULL,
     "This JavaScript function is supposed to upload files one at a time and then print \"all "
     "done\", but \"all done\" prints immediately and the server sometimes gets overloaded. Why, "
     "and how do I fix it?\n\n"
     "```javascript\n"
     "async function uploadAll(files) {\n"
     "  files.forEach(async (file) => {\n"
     "    const body = await readFileAsBuffer(file.path);\n"
     "    await fetch(`/api/upload/${encodeURIComponent(file.name)}`, {\n"
     "      method: \"PUT\",\n"
     "      body,\n"
     "    });\n"
     "    console.log(\"uploaded\", file.name);\n"
     "  });\n"
     "  console.log(\"all done\");\n"
     "}\n"
     "```\n\n"
     "Please show one version that uploads strictly one at a time and another that allows at "
     "most three uploads in parallel."},
    {NULL,
     "Here are some lines from our nginx access log during a slow period this morning. The last "
     "field is the request time in seconds. What patterns do you see, and what would you "
     "investigate first?\n\n"
     "```\n"
     "10.2.0.14 - - [14/May/2024:08:01:12 +0000] \"GET /api/products?page=1 HTTP/1.1\" 200 5123 "
     "0.041\n"
     "10.2.0.14 - - [14/May/2024:08:01:13 +0000] \"GET /api/products?page=2 HTTP/1.1\" 200 5087 "
     "0.038\n"
     "10.2.0.31 - - [14/May/2024:08:01:13 +0000] \"GET /api/search?q=blue+lamp HTTP/1.1\" 200 "
     "880 2.914\n"
     "10.2.0.14 - - [14/May/2024:08:01:14 +0000] \"POST /api/cart HTTP/1.1\" 201 212 0.065\n"
     "10.2.0.31 - - [14/May/2024:08:01:15 +0000] \"GET /api/search?q=lamp HTTP/1.1\" 200 4410 "
     "3.402\n"
     "10.2.0.8 - - [14/May/2024:08:01:15 +0000] \"GET /api/search?q=desk HTTP/1.1\" 504 167 "
     "10.001\n"
     "10.2.0.14 - - [14/May/2024:08:01:16 +0000] \"GET /api/products/8812 HTTP/1.1\" 200 1840 "
     "0.029\n"
     "10.2.0.8 - - [14/May/2024:08:01:17 +0000] \"GET /api/search?q=chair HTTP/1.1\" 200 3921 "
     "3.118\n"
     "```"},
};

/* long: 800-1800 prompt tokens; a long document followed by an instruction. Each
 * document is a macro so that two prompts can share it. */

/* A platform team meeting transcript about migrating a job queue. */
#define DOC_SYNC                                                                                   \
    "Transcript: Platform team weekly sync, Tuesday\n"                                             \
    "Attendees: Maria Okafor (engineering manager), Dev Patel (platform), Lena Fischer "           \
    "(platform), Tom Brandt (SRE), Aisha Rahman (payments team, guest)\n\n"                        \
    "Maria: Okay, let's start, we have a lot today. Main topic is the job queue migration. Dev, "  \
    "can you give the status?\n\n"                                                                 \
    "Dev: Sure. So as a reminder, we are moving background jobs off our homegrown Redis queue "    \
    "onto the managed queue service. Four of the eleven job types are fully migrated and have "    \
    "run for two weeks with no incidents. The remaining seven include the invoice generator and "  \
    "the payment reconciliation jobs, which are the scary ones.\n\n"                               \
    "Maria: What's the blocker on those?\n\n"                                                      \
    "Dev: Two things. First, the reconciliation job depends on strict ordering per merchant. The " \
    "old queue gave us that by accident, because we only ever ran one worker. The managed "        \
    "service only orders messages inside a message group, so we will use the merchant ID as the "  \
    "group ID. The harder part is that some reconciliation jobs take forty minutes, and the "      \
    "default visibility timeout is thirty seconds, so if we forget to extend it, the message "     \
    "becomes visible again and a second worker picks it up.\n\n"                                   \
    "Aisha: And a second worker running reconciliation for the same merchant at the same time "    \
    "would be really bad for us. We could double-post ledger entries.\n\n"                         \
    "Dev: Right. So the plan is to extend the visibility timeout with a heartbeat every five "     \
    "minutes while the job runs, and also to add an idempotency key on the ledger writes so that " \
    "even if a job runs twice, the second run is a no-op.\n\n"                                     \
    "Aisha: We actually already have idempotency keys on the ledger API, but the reconciliation "  \
    "job doesn't pass one today. I can get someone on my team to add it. Realistically that's "    \
    "about a week of work including tests.\n\n"                                                    \
    "Maria: Can you own that, Aisha? Target end of next week?\n\n"                                 \
    "Aisha: Yes, I'll take it. I'll put Sam on it and review it myself.\n\n"                       \
    "Maria: Great. Lena, what about the invoice generator?\n\n"                                    \
    "Lena: The invoice generator is simpler in terms of ordering, but it has a different "         \
    "problem. It writes PDFs to local disk first and then uploads them, and on the new workers "   \
    "the local disk is tiny, about two gigabytes. At the end of the month we generate around "     \
    "ninety thousand invoices in a few hours, and I am pretty sure we will run out of disk if "    \
    "uploads get slow. I want to change it to stream straight to object storage. I have a branch " \
    "for it, it works in staging, but I haven't load tested it.\n\n"                               \
    "Tom: From the SRE side I'd really like a load test before month end. Last month the old "     \
    "queue backed up to about four hundred thousand messages on the first of the month and it "    \
    "took six hours to drain. If that happens on the new system, I want to know in advance how "   \
    "the autoscaling behaves.\n\n"                                                                 \
    "Lena: I can run a load test on Thursday if someone can give me a copy of last month's "       \
    "invoice volume as test data.\n\n"                                                             \
    "Tom: I'll get you an anonymized dump by Wednesday evening.\n\n"                               \
    "Maria: Tom, anything else?\n\n"                                                               \
    "Tom: Yes, two things. First, alerting. Right now we alert on queue depth over ten thousand, " \
    "which on the new queue fires every night during the export and everybody has learned to "     \
    "ignore it. I want to switch to alerting on age of the oldest message instead, with a "        \
    "threshold per queue. For most queues fifteen minutes is fine; for payments I'd say five.\n\n" \
    "Aisha: Five minutes for payments sounds right.\n\n"                                           \
    "Tom: Second thing is cost. The managed queue is billed per request, and our workers are "     \
    "polling with short polling, so we are paying for a lot of empty receives. I estimated about " \
    "eleven hundred dollars a month wasted. Switching to long polling with a twenty second wait "  \
    "should cut that by about ninety percent. I'd like to roll it out one queue at a time.\n\n"    \
    "Maria: Let's do that. Any concerns?\n\n"                                                      \
    "Dev: Only that the old client library we use for two of the job types doesn't support long "  \
    "polling. We'd have to upgrade it first. I can do that as part of migrating those two.\n\n"    \
    "Maria: Fine. So when do we turn off the old Redis queue completely?\n\n"                      \
    "Dev: If everything goes well, the last job types move in three weeks. I'd want to keep the "  \
    "old queue running, drained but available, for another two weeks as a fallback, so "           \
    "decommission in five weeks.\n\n"                                                              \
    "Tom: I'd rather not keep it around longer than that. It's still on the old Redis version "    \
    "that's out of support, and it's the only thing keeping that cluster alive. That cluster "     \
    "costs us about two thousand a month.\n\n"                                                     \
    "Maria: Okay, five weeks is the target then, and we don't extend it without talking about it " \
    "in this meeting. Let's also make sure there's a rollback plan written down for the payments " \
    "jobs specifically. Dev, can you write that up?\n\n"                                           \
    "Dev: Yes, I'll have a draft by Monday.\n\n"                                                   \
    "Maria: One more thing before we go. Lena, you mentioned last week that on-call for the new "  \
    "queue isn't clear.\n\n"                                                                       \
    "Lena: Right. The runbooks still point to the old Redis dashboards. If someone gets paged at " \
    "three in the morning about the invoice queue, they'll open the wrong dashboard. I'll update " \
    "the runbooks, but I need Tom to confirm the new alert names first.\n\n"                       \
    "Tom: I'll send you the list after I change the alerts, probably Friday.\n\n"                  \
    "Maria: Good. Okay, that's time. Thanks everyone."

/* A Python cron job that syncs supplier stock to a store API (with bugs). */
#define DOC_INVENTORY_PY                                                                           \
    "# inventory_sync.py\n"                                                                        \
    "# Pulls the supplier's stock file every 15 minutes and pushes quantity\n"                     \
    "# changes to the storefront API. Runs as a cron job on the ops box.\n\n"                      \
    "import csv\n"                                                                                 \
    "import io\n"                                                                                  \
    "import time\n"                                                                                \
    "import logging\n"                                                                             \
    "from datetime import datetime\n\n"                                                            \
    "import requests\n\n"                                                                          \
    "log = logging.getLogger(\"inventory_sync\")\n\n"                                              \
    "SUPPLIER_URL = \"https://supplier.example.com/feeds/stock.csv\"\n"                            \
    "STORE_API = \"https://api.shop.example.com/v2\"\n"                                            \
    "PAGE_SIZE = 100\n"                                                                            \
    "MAX_RETRIES = 3\n\n"                                                                          \
    "_last_seen = {}\n\n\n"                                                                        \
    "def fetch_supplier_csv(session, retries=MAX_RETRIES):\n"                                      \
    "    for attempt in range(retries):\n"                                                         \
    "        try:\n"                                                                               \
    "            resp = session.get(SUPPLIER_URL, timeout=30)\n"                                   \
    "            resp.raise_for_status()\n"                                                        \
    "            return resp.text\n"                                                               \
    "        except:\n"                                                                            \
    "            log.warning(\"fetch failed, attempt %d\", attempt)\n"                             \
    "            time.sleep(2 ** attempt)\n"                                                       \
    "    return \"\"\n\n\n"                                                                        \
    "def parse_row(row):\n"                                                                        \
    "    \"\"\"Turn one CSV row into (sku, quantity, updated_at).\"\"\"\n"                         \
    "    sku = row[\"sku\"].strip().upper()\n"                                                     \
    "    qty = int(row[\"qty\"])\n"                                                                \
    "    updated = datetime.strptime(row[\"updated\"], \"%Y-%m-%d %H:%M\")\n"                      \
    "    return sku, qty, updated\n\n\n"                                                           \
    "def parse_feed(text):\n"                                                                      \
    "    items = {}\n"                                                                             \
    "    reader = csv.DictReader(io.StringIO(text))\n"                                             \
    "    for row in reader:\n"                                                                     \
    "        try:\n"                                                                               \
    "            sku, qty, updated = parse_row(row)\n"                                             \
    "        except ValueError:\n"                                                                 \
    "            continue\n"                                                                       \
    "        items[sku] = (qty, updated)\n"                                                        \
    "    return items\n\n\n"                                                                       \
    "def list_store_products(session, token):\n"                                                   \
    "    products = []\n"                                                                          \
    "    page = 1\n"                                                                               \
    "    while True:\n"                                                                            \
    "        resp = session.get(\n"                                                                \
    "            f\"{STORE_API}/products\",\n"                                                     \
    "            params={\"page\": page, \"per_page\": PAGE_SIZE},\n"                              \
    "            headers={\"Authorization\": f\"Bearer {token}\"},\n"                              \
    "        )\n"                                                                                  \
    "        batch = resp.json()[\"products\"]\n"                                                  \
    "        products.extend(batch)\n"                                                             \
    "        if len(batch) < PAGE_SIZE - 1:\n"                                                     \
    "            break\n"                                                                          \
    "        page += 1\n"                                                                          \
    "    return products\n\n\n"                                                                    \
    "def changed_items(items, since=datetime.now()):\n"                                            \
    "    out = []\n"                                                                               \
    "    for sku, (qty, updated) in items.items():\n"                                              \
    "        if updated < since:\n"                                                                \
    "            continue\n"                                                                       \
    "        if _last_seen.get(sku) == qty:\n"                                                     \
    "            continue\n"                                                                       \
    "        out.append((sku, qty))\n"                                                             \
    "    return out\n\n\n"                                                                         \
    "def push_quantity(session, token, product_id, qty, tags=[]):\n"                               \
    "    tags.append(\"synced\")\n"                                                                \
    "    body = {\"inventory_quantity\": qty, \"tags\": tags}\n"                                   \
    "    resp = session.put(\n"                                                                    \
    "        f\"{STORE_API}/products/{product_id}\",\n"                                            \
    "        json=body,\n"                                                                         \
    "        headers={\"Authorization\": f\"Bearer {token}\"},\n"                                  \
    "    )\n"                                                                                      \
    "    return resp.status_code == 200\n\n\n"                                                     \
    "def main(token):\n"                                                                           \
    "    session = requests.Session()\n"                                                           \
    "    text = fetch_supplier_csv(session)\n"                                                     \
    "    items = parse_feed(text)\n"                                                               \
    "    products = list_store_products(session, token)\n"                                         \
    "    by_sku = {p[\"sku\"]: p[\"id\"] for p in products}\n\n"                                   \
    "    updated = 0\n"                                                                            \
    "    for sku, qty in changed_items(items):\n"                                                  \
    "        pid = by_sku[sku]\n"                                                                  \
    "        if push_quantity(session, token, pid, qty):\n"                                        \
    "            _last_seen[sku] = qty\n"                                                          \
    "            updated += 1\n"                                                                   \
    "        else:\n"                                                                              \
    "            log.error(\"failed to update %s\", sku)\n"                                        \
    "    log.info(\"updated %d of %d products\", updated, len(products))\n\n\n"                    \
    "if __name__ == \"__main__\":\n"                                                               \
    "    import os\n"                                                                              \
    "    main(os.environ[\"STORE_TOKEN\"])\n"

/* A design doc proposing per-tenant API rate limiting. */
#define DOC_RATELIMIT                                                                              \
    "Design doc: Per-tenant rate limiting for the public API\n"                                    \
    "Author: Jonas Weber. Status: draft for review. Reviewers: API team, SRE, Support.\n\n"        \
    "1. Background\n"                                                                              \
    "Our public REST API is used by about 3,400 customer accounts (\"tenants\"). Today the only "  \
    "protection is a global limit of 5,000 requests per second enforced at the load balancer. In " \
    "the last quarter we had three incidents where a single tenant sent a burst of traffic, "      \
    "usually from a misconfigured integration retrying in a tight loop, and the resulting "        \
    "database load made the API slow for everyone. In the worst case, on March 8, p99 latency "    \
    "for all tenants went from 180 ms to over 9 seconds for 40 minutes, and support received 212 " \
    "tickets.\n\n"                                                                                 \
    "2. Goals\n"                                                                                   \
    "- Stop one tenant from degrading the API for other tenants.\n"                                \
    "- Give each tenant a clear, documented limit that depends on their plan.\n"                   \
    "- Tell clients when they are being limited and when to retry, using standard HTTP headers.\n" \
    "- Add less than 2 ms of latency at p99 to each request.\n\n"                                  \
    "3. Non-goals\n"                                                                               \
    "- Billing for usage. This design only limits; it does not meter for invoices.\n"              \
    "- Protecting against deliberate denial-of-service attacks. The CDN and load balancer "        \
    "already handle volumetric attacks.\n"                                                         \
    "- Limiting internal services that call the API with service credentials.\n\n"                 \
    "4. Proposal\n"                                                                                \
    "We will implement a token bucket per tenant, stored in our existing Redis cluster. Each "     \
    "tenant's bucket has a capacity (the burst size) and a refill rate (the sustained requests "   \
    "per second). The limits per plan are:\n"                                                      \
    "- Free: 5 requests per second, burst of 20\n"                                                 \
    "- Team: 50 requests per second, burst of 200\n"                                               \
    "- Enterprise: 300 requests per second, burst of 1,000, adjustable per contract\n\n"           \
    "The check runs in a new middleware in the API gateway, before authentication-heavy work but " \
    "after the API key is resolved to a tenant. The middleware calls a small Lua script in Redis " \
    "that atomically refills the bucket based on elapsed time, tries to take one token, and "      \
    "returns the remaining tokens and the time until the next token. Using a Lua script keeps "    \
    "the read-modify-write atomic with one round trip.\n\n"                                        \
    "When a request is allowed, we add the headers RateLimit-Limit, RateLimit-Remaining and "      \
    "RateLimit-Reset. When it is rejected, we return status 429 with a Retry-After header and a "  \
    "JSON error body that links to the documentation.\n\n"                                         \
    "Some endpoints are much more expensive than others. The export endpoint, for example, can "   \
    "take several seconds of database time. Instead of a separate bucket per endpoint, we will "   \
    "give each endpoint a cost, defaulting to 1. Export costs 20, bulk update costs 10, and "      \
    "search costs 2.\n\n"                                                                          \
    "5. Failure handling\n"                                                                        \
    "If Redis is unavailable or the script takes longer than 5 ms, the middleware fails open: "    \
    "the request is allowed and a metric is incremented. We prefer a temporary loss of "           \
    "protection over rejecting all traffic because of a Redis problem.\n\n"                        \
    "6. Alternatives considered\n"                                                                 \
    "a) Limits in the load balancer. Our load balancer can limit by header value, but only with "  \
    "fixed windows and without per-plan configuration, and it cannot apply endpoint costs.\n"      \
    "b) In-memory limiting in each gateway instance. This avoids Redis, but with 24 gateway "      \
    "instances each instance would only see a fraction of a tenant's traffic, so limits would be " \
    "approximate and would change whenever we scale the gateway.\n"                                \
    "c) A sliding window log. More precise than a token bucket but needs to store every request "  \
    "timestamp, which is far more memory for high-volume tenants.\n\n"                             \
    "7. Rollout\n"                                                                                 \
    "Phase 1 (two weeks): shadow mode. The middleware computes decisions and records metrics and " \
    "logs, but never rejects. We use this to find tenants who would be limited.\n"                 \
    "Phase 2: Support contacts the tenants who would be limited more than 1% of the time, and we " \
    "raise limits for enterprise contracts where needed.\n"                                        \
    "Phase 3: enforce for Free plans, then a week later for Team and Enterprise.\n"                \
    "A feature flag per tenant lets us disable enforcement instantly for a single customer.\n\n"   \
    "8. Monitoring\n"                                                                              \
    "New metrics: decisions by plan and result, Redis script latency, fail-open count. Alerts: "   \
    "fail-open count above 100 per minute for 5 minutes; more than 5% of all requests rejected "   \
    "for 10 minutes.\n\n"                                                                          \
    "9. Open questions\n"                                                                          \
    "- Should the limit apply per tenant or per API key? Some large tenants use separate keys "    \
    "for separate teams.\n"                                                                        \
    "- Do we need a separate limit for concurrent long-running requests, in addition to the "      \
    "rate?\n"                                                                                      \
    "- How should limits interact with our retry guidance in the SDKs, which currently retries "   \
    "429 responses immediately?"

/* A support ticket thread about duplicated calendar events. */
#define DOC_TICKET                                                                                 \
    "Ticket #88412: Calendar events duplicated after time zone change\n"                           \
    "Customer: Hollis & Grant Accounting (Team plan, 14 seats). Priority: normal, raised to high " \
    "on day 4.\n\n"                                                                                \
    "--- Message 1, from Rebecca Hollis (customer), Monday 09:12 ---\n"                            \
    "Hi, since last Thursday every meeting in our shared \"Client Appointments\" calendar shows "  \
    "up twice in Outlook. It started right after I changed the account time zone in your "         \
    "settings from Eastern to Central, because two of us moved to the Chicago office. Some of "    \
    "the duplicates are one hour off from the originals, which is causing real confusion: "        \
    "yesterday a client showed up and nobody was ready because half the team saw 2pm and the "     \
    "other half saw 3pm. Please help, this is our busiest season.\n\n"                             \
    "--- Message 2, from Kevin (support agent), Monday 11:40 ---\n"                                \
    "Hi Rebecca, thanks for reaching out and sorry for the trouble. Could you try disconnecting "  \
    "and reconnecting the Outlook integration under Settings > Integrations > Calendar? This "     \
    "refreshes the sync and usually clears up duplicates. Let me know how it goes!\n\n"            \
    "--- Message 3, from Rebecca Hollis, Monday 15:03 ---\n"                                       \
    "I did that. Now there are THREE copies of some events. The new copies have the correct "      \
    "time, but the old wrong ones are still there. I tried deleting the duplicates in Outlook "    \
    "but they come back after about fifteen minutes.\n\n"                                          \
    "--- Message 4, from Kevin, Tuesday 10:20 ---\n"                                               \
    "Thanks for trying that. Deleting in Outlook won't work because our sync restores events it "  \
    "thinks are missing. Could you please tell me:\n"                                              \
    "1. Which version of Outlook you use (desktop, web, or mobile)?\n"                             \
    "2. Whether everyone in the team is affected, or only some people?\n"                          \
    "3. Roughly how many events are in the calendar?\n\n"                                          \
    "--- Message 5, from Rebecca Hollis, Tuesday 12:47 ---\n"                                      \
    "1. Most of us use Outlook desktop on Windows, two people use Outlook on the web.\n"           \
    "2. Everyone sees duplicates, but only people whose personal time zone in your app is still "  \
    "set to Eastern see the wrong times. The two of us in Chicago see the right times on the "     \
    "duplicates but the wrong times on the originals. I think.\n"                                  \
    "3. About 1,100 events from January to the end of April. They are mostly recurring weekly "    \
    "client meetings.\n"                                                                           \
    "Honestly we are considering going back to paper. We pay for this service specifically for "   \
    "the calendar sync.\n\n"                                                                       \
    "--- Internal note, from Kevin, Tuesday 13:05 ---\n"                                           \
    "Reproduced on a test account: changed account time zone from America/New_York to "            \
    "America/Chicago with Outlook sync on. After next sync cycle, recurring events are "           \
    "re-created with new external IDs instead of being updated. Single (non-recurring) events "    \
    "update correctly. Looks like the recurrence ID includes the time zone name, so after the "    \
    "change we don't match the existing Outlook events and create new ones. Disconnect/reconnect " \
    "makes it worse because it triggers a full export without cleaning up the events created by "  \
    "the previous connection. Checked the known issues board: there is an open bug CAL-2291 "      \
    "\"Recurring events re-created on TZ change\" from six weeks ago, status \"Backlog\", 3 "      \
    "linked tickets, no assignee.\n\n"                                                             \
    "--- Message 6, from Rebecca Hollis, Wednesday 08:55 ---\n"                                    \
    "Any update? We had another missed appointment this morning. I need to know today whether "    \
    "this is going to be fixed or whether we should move to another tool. I would also like to "   \
    "know if we can get a credit for this month, since the main feature we pay for has been "      \
    "broken for a week.\n\n"                                                                       \
    "--- Internal note, from Priya (support lead), Wednesday 09:30 ---\n"                          \
    "Raised priority to high. Customer is at risk of churning; annual contract worth about "       \
    "$5,000 renews in June. Credits up to one month are approved for cases like this. "            \
    "Engineering on-call for integrations this week is Marco. Workaround that might help while "   \
    "we wait: if the team sets the account time zone back to Eastern temporarily, new duplicates " \
    "should stop, but that doesn't remove the ones already created. There is an admin script "     \
    "(dedupe_calendar_events) that engineering can run per account to remove events created by "   \
    "our sync that share a title and recurrence pattern with an older event; it needs an "         \
    "engineer and takes about an hour for an account this size. We can't promise a date for the "  \
    "CAL-2291 fix until engineering looks at it."

/* A popular-science article on how bread dough rises. */
#define DOC_BREAD                                                                                  \
    "What actually happens when bread dough rises\n\n"                                             \
    "Almost every home baker has had the same experience: you follow a recipe exactly, leave the " \
    "dough in a warm place, and two hours later it has barely moved. The next week the same "      \
    "recipe overflows the bowl in forty minutes. The reason is that rising is not a single event " \
    "but the combined result of living yeast, a network of proteins, and a handful of chemical "   \
    "reactions, each of which responds differently to temperature, time and ingredients. "         \
    "Understanding those pieces makes it much easier to get consistent bread.\n\n"                 \
    "The yeast\n"                                                                                  \
    "Baker's yeast is a single-celled fungus, Saccharomyces cerevisiae. When it is mixed into "    \
    "dough, it starts feeding on sugars. Flour contains only a small amount of free sugar, but "   \
    "it also contains starch and enzymes called amylases. As soon as flour gets wet, the "         \
    "amylases start breaking damaged starch granules into maltose and glucose, giving the yeast "  \
    "a steady supply of food. Without oxygen, which runs out quickly inside a ball of dough, "     \
    "yeast ferments those sugars into carbon dioxide and ethanol. The carbon dioxide is what "     \
    "makes the dough grow; the ethanol mostly evaporates in the oven, though along with other "    \
    "byproducts it contributes to flavor.\n\n"                                                     \
    "Yeast activity depends strongly on temperature. It is slow in a cold refrigerator, speeds "   \
    "up steadily as the dough warms, and is most active somewhere around 30 to 35 degrees "        \
    "Celsius. Above about 40 degrees it becomes stressed, and around 55 to 60 degrees it dies. A " \
    "common rule of thumb is that every 8 to 10 degrees of extra warmth roughly doubles the "      \
    "speed of rising, within the comfortable range. That is why a kitchen at 18 degrees in "       \
    "winter can take twice as long as the same kitchen at 26 degrees in summer.\n\n"               \
    "The gluten network\n"                                                                         \
    "Carbon dioxide alone would simply bubble out of a wet paste. What holds the gas in is "       \
    "gluten, a network formed when two groups of wheat proteins, glutenins and gliadins, absorb "  \
    "water. Glutenins form long, elastic chains that give dough its springiness, while gliadins "  \
    "act more like a lubricant that lets the dough stretch. Kneading, or simply time, aligns and " \
    "links these proteins into thin films that surround each tiny gas bubble. As yeast produces "  \
    "more gas, the bubbles inflate, and the films stretch like many small balloons.\n\n"           \
    "This is why flour type matters. Bread flour has more protein than cake flour, so it forms a " \
    "stronger network and can hold more gas. Rye flour forms very little gluten; rye breads rely " \
    "instead on sticky carbohydrates called pentosans to trap gas, which is one reason they are "  \
    "denser.\n\n"                                                                                  \
    "Salt and sugar\n"                                                                             \
    "Salt tightens the gluten network and slows yeast down, which is why doughs without salt "     \
    "rise quickly but taste flat and collapse easily. Small amounts of sugar feed the yeast, but " \
    "large amounts, as in sweet brioche doughs, pull water away from yeast cells by osmosis and "  \
    "slow fermentation. Recipes for very sweet doughs often use more yeast, or a special "         \
    "osmotolerant yeast, for that reason.\n\n"                                                     \
    "Sourdough\n"                                                                                  \
    "A sourdough starter contains wild yeasts together with lactic acid bacteria, which often "    \
    "outnumber the yeast by a hundred to one. The bacteria produce lactic and acetic acids, "      \
    "giving sourdough its tang. The acidity also changes the dough: it slows some enzymes, "       \
    "strengthens the gluten at first, and over very long fermentations begins to weaken it. Wild " \
    "yeasts are usually slower than commercial yeast, so sourdough rises take several hours, and " \
    "they are even more sensitive to temperature. Warmer fermentation tends to favor lactic "      \
    "acid, which tastes milder and creamier; cooler fermentation tends to produce more acetic "    \
    "acid, which tastes sharper.\n\n"                                                              \
    "How to tell when dough is ready\n"                                                            \
    "Because rising speed varies so much, the time in a recipe is only a guide. Most bakers "      \
    "judge readiness by volume and feel instead. For a typical sandwich loaf, the dough should "   \
    "roughly double during the first rise. For the final rise, the poke test is popular: press a " \
    "floured finger about a centimeter into the dough. If the dent springs back immediately, the " \
    "dough needs more time. If it springs back slowly and leaves a small dent, it is ready. If "   \
    "it does not spring back at all, the dough is probably over-proofed, meaning the gluten "      \
    "films have stretched so far that they will tear in the oven and the loaf may collapse.\n\n"   \
    "In the oven\n"                                                                                \
    "The last burst of rising, called oven spring, happens in the first ten to fifteen minutes "   \
    "of baking. As the dough heats, yeast works furiously for a few minutes before it dies, the "  \
    "gas already in the bubbles expands, and some water and ethanol turn into vapor. Meanwhile "   \
    "the starch gelatinizes and the proteins set, fixing the structure in place. Steam in the "    \
    "oven keeps the crust soft for longer, which lets the loaf expand fully before the crust "     \
    "hardens and browns."

/* A draft incident report for a checkout outage, with logs. */
#define DOC_INCIDENT                                                                               \
    "Incident report draft: Checkout failures, Saturday\n"                                         \
    "Severity: SEV-1. Duration of customer impact: 10:42 to 12:19 UTC (97 minutes). Author: "      \
    "on-call engineer. Status: draft, root cause not yet confirmed.\n\n"                           \
    "Summary\n"                                                                                    \
    "Between 10:42 and 12:19 UTC, about 38% of checkout attempts on the web store failed with an " \
    "error page, and mobile app users saw \"Something went wrong, please try again\". Roughly "    \
    "4,700 orders failed. Browsing, search and cart were not affected.\n\n"                        \
    "Timeline (UTC)\n"                                                                             \
    "09:55 Scheduled deploy of checkout-service v412 begins (rolling, 12 pods). Change list: "     \
    "upgrade of the HTTP client library, new feature flag for gift wrapping (off by default), "    \
    "logging changes.\n"                                                                           \
    "10:20 Deploy completes. Error rate normal.\n"                                                 \
    "10:30 Marketing email for the weekend sale sent to 1.9 million subscribers.\n"                \
    "10:38 Checkout request rate rises from about 60/s to 310/s.\n"                                \
    "10:42 Error rate on POST /checkout rises to 35-40%. Pager fires at 10:47 (5-minute alert "    \
    "window).\n"                                                                                   \
    "10:52 On-call acknowledges. Suspects the deploy and starts a rollback to v411.\n"             \
    "11:09 Rollback complete. Error rate drops to around 25% for a few minutes, then returns to "  \
    "35%.\n"                                                                                       \
    "11:15 Second engineer joins. Notices the payment-gateway-proxy dashboard shows connection "   \
    "pool exhaustion.\n"                                                                           \
    "11:31 Payment-gateway-proxy scaled from 4 to 10 pods. No improvement.\n"                      \
    "11:48 Database team reports the orders database is healthy: CPU 40%, no lock waits.\n"        \
    "12:02 Engineer finds that checkout pods are restarting; raises memory limit from 512 MiB to " \
    "1 GiB and restarts the deployment.\n"                                                         \
    "12:19 Error rate back below 0.5%. Incident marked mitigated.\n"                               \
    "12:30 Marketing email traffic tails off.\n\n"                                                 \
    "Selected log lines (checkout-service, pod checkout-7f9c-2, v411 after rollback)\n"            \
    "11:20:03.114 INFO  request_id=a81 POST /checkout cart_items=3 user=guest\n"                   \
    "11:20:03.119 DEBUG request_id=a81 calling payment-gateway-proxy /authorize "                  \
    "timeout_ms=10000\n"                                                                           \
    "11:20:08.402 WARN  payment client: pool wait time 5283ms (max_connections=20, in_use=20, "    \
    "waiting=143)\n"                                                                               \
    "11:20:13.119 ERROR request_id=a81 payment authorize failed: context deadline exceeded after " \
    "10000ms\n"                                                                                    \
    "11:20:13.120 INFO  request_id=a81 retrying authorize (attempt 2 of 3)\n"                      \
    "11:20:13.505 WARN  payment client: pool wait time 5612ms (max_connections=20, in_use=20, "    \
    "waiting=171)\n"                                                                               \
    "11:20:21.880 WARN  runtime: heap in use 481 MiB of limit 512 MiB\n"                           \
    "11:20:22.006 ERROR OOMKilled: container checkout exceeded memory limit\n"                     \
    "11:20:25.314 INFO  starting checkout-service v411, payment pool max_connections=20\n\n"       \
    "Selected log lines (payment-gateway-proxy, pod pgp-3)\n"                                      \
    "11:20:04.002 INFO  active_connections=61 upstream=acquirer-eu latency_p50=420ms "             \
    "latency_p99=2900ms\n"                                                                         \
    "11:20:10.450 WARN  upstream acquirer-eu rate limited: 429 Too Many Requests, "                \
    "retry_after=1s\n"                                                                             \
    "11:20:11.470 WARN  upstream acquirer-eu rate limited: 429 Too Many Requests, "                \
    "retry_after=1s\n"                                                                             \
    "11:25:00.000 INFO  active_connections=58 upstream=acquirer-eu latency_p50=450ms "             \
    "latency_p99=3100ms\n\n"                                                                       \
    "Metrics observations\n"                                                                       \
    "- The payment acquirer's latency p99 rose from 800 ms to about 3 s starting at 10:40, and "   \
    "the acquirer returned 429 responses to about 6% of our calls between 10:40 and 12:10. The "   \
    "acquirer's status page did not report an incident.\n"                                         \
    "- Each checkout pod holds at most 20 connections to payment-gateway-proxy. With 12 pods "     \
    "that is 240 concurrent authorizations at most.\n"                                             \
    "- Checkout retries a failed authorization up to 3 times with no backoff. Each attempt has a " \
    "10 s timeout.\n"                                                                              \
    "- Memory per checkout pod grew with the number of requests waiting for a payment "            \
    "connection; each waiting request holds its parsed cart and session, about 2 to 3 MiB.\n"      \
    "- Pod restarts (OOMKilled) started at 10:44, about 2 minutes after errors started, and "      \
    "continued until the memory limit was raised. Each restart dropped all in-flight requests on " \
    "that pod.\n"                                                                                  \
    "- Increasing the payment-gateway-proxy replicas did not change the number of connections "    \
    "the checkout pods could open.\n\n"                                                            \
    "Open items\n"                                                                                 \
    "- Why did the rollback appear to help briefly?\n"                                             \
    "- Was the HTTP client library upgrade in v412 related at all?\n"                              \
    "- Should the pager have fired sooner?"

/* A C ring buffer line reader from a log shipper (with bugs). */
#define DOC_RINGBUF_C                                                                              \
    "/* linebuf.c - part of a small log shipper.\n"                                                \
    " * Reads bytes from a file descriptor into a fixed-size ring buffer and hands\n"              \
    " * complete lines to a callback. A line longer than the buffer is truncated. */\n"            \
    "#include <errno.h>\n"                                                                         \
    "#include <stdlib.h>\n"                                                                        \
    "#include <string.h>\n"                                                                        \
    "#include <unistd.h>\n\n"                                                                      \
    "typedef void (*line_fn)(const char *line, size_t len, void *ud);\n\n"                         \
    "typedef struct linebuf {\n"                                                                   \
    "    char *data;\n"                                                                            \
    "    size_t cap;   /* capacity in bytes, a power of two */\n"                                  \
    "    size_t head;  /* next byte to read (consumer) */\n"                                       \
    "    size_t tail;  /* next byte to write (producer) */\n"                                      \
    "    char *scratch; /* used to hand out lines that wrap around the end */\n"                   \
    "} linebuf;\n\n"                                                                               \
    "int linebuf_init(linebuf *b, size_t cap) {\n"                                                 \
    "    if (cap & (cap - 1))\n"                                                                   \
    "        return -1;\n"                                                                         \
    "    b->data = malloc(cap);\n"                                                                 \
    "    b->scratch = malloc(cap);\n"                                                              \
    "    if (!b->data || !b->scratch)\n"                                                           \
    "        return -1;\n"                                                                         \
    "    b->cap = cap;\n"                                                                          \
    "    b->head = b->tail = 0;\n"                                                                 \
    "    return 0;\n"                                                                              \
    "}\n\n"                                                                                        \
    "void linebuf_free(linebuf *b) {\n"                                                            \
    "    free(b->data);\n"                                                                         \
    "    free(b->scratch);\n"                                                                      \
    "}\n\n"                                                                                        \
    "static size_t used(const linebuf *b) {\n"                                                     \
    "    return b->tail - b->head;\n"                                                              \
    "}\n\n"                                                                                        \
    "static size_t space(const linebuf *b) {\n"                                                    \
    "    return b->cap - used(b);\n"                                                               \
    "}\n\n"                                                                                        \
    "/* Read as much as fits from fd. Returns bytes read, 0 on EOF, -1 on error. */\n"             \
    "ssize_t linebuf_fill(linebuf *b, int fd) {\n"                                                 \
    "    size_t pos = b->tail & (b->cap - 1);\n"                                                   \
    "    size_t n = space(b);\n"                                                                   \
    "    if (n > b->cap - pos)\n"                                                                  \
    "        n = b->cap - pos; /* only up to the physical end this time */\n"                      \
    "    ssize_t r;\n"                                                                             \
    "    do {\n"                                                                                   \
    "        r = read(fd, b->data + pos, n);\n"                                                    \
    "    } while (r < 0 && errno == EINTR);\n"                                                     \
    "    if (r > 0)\n"                                                                             \
    "        b->tail += r;\n"                                                                      \
    "    return r;\n"                                                                              \
    "}\n\n"                                                                                        \
    "/* Copy `len` bytes starting at logical offset `off` into dst. */\n"                          \
    "static void copy_out(const linebuf *b, size_t off, size_t len, char *dst) {\n"                \
    "    size_t pos = off & (b->cap - 1);\n"                                                       \
    "    size_t first = b->cap - pos;\n"                                                           \
    "    if (first > len)\n"                                                                       \
    "        first = len;\n"                                                                       \
    "    memcpy(dst, b->data + pos, first);\n"                                                     \
    "    memcpy(dst + first, b->data, len - first);\n"                                             \
    "}\n\n"                                                                                        \
    "/* Deliver every complete line to fn. Returns the number of lines. */\n"                      \
    "int linebuf_drain(linebuf *b, line_fn fn, void *ud) {\n"                                      \
    "    int lines = 0;\n"                                                                         \
    "    size_t start = b->head;\n"                                                                \
    "    for (size_t i = b->head; i < b->tail; i++) {\n"                                           \
    "        if (b->data[i & (b->cap - 1)] != '\\n')\n"                                            \
    "            continue;\n"                                                                      \
    "        size_t len = i - start;\n"                                                            \
    "        size_t pos = start & (b->cap - 1);\n"                                                 \
    "        if (pos + len <= b->cap) {\n"                                                         \
    "            b->data[pos + len] = '\\0';\n"                                                    \
    "            fn(b->data + pos, len, ud);\n"                                                    \
    "        } else {\n"                                                                           \
    "            copy_out(b, start, len, b->scratch);\n"                                           \
    "            b->scratch[len] = '\\0';\n"                                                       \
    "            fn(b->scratch, len, ud);\n"                                                       \
    "        }\n"                                                                                  \
    "        lines++;\n"                                                                           \
    "        start = i + 1;\n"                                                                     \
    "    }\n"                                                                                      \
    "    b->head = start;\n"                                                                       \
    "    /* Buffer full with no newline: emit what we have as a truncated line. */\n"              \
    "    if (space(b) == 0) {\n"                                                                   \
    "        copy_out(b, b->head, b->cap, b->scratch);\n"                                          \
    "        b->scratch[b->cap] = '\\0';\n"                                                        \
    "        fn(b->scratch, b->cap, ud);\n"                                                        \
    "        b->head = b->tail;\n"                                                                 \
    "        lines++;\n"                                                                           \
    "    }\n"                                                                                      \
    "    return lines;\n"                                                                          \
    "}\n\n"                                                                                        \
    "/* Example consumer: count bytes and lines. */\n"                                             \
    "typedef struct stats {\n"                                                                     \
    "    size_t bytes, lines;\n"                                                                   \
    "} stats;\n\n"                                                                                 \
    "static void count_line(const char *line, size_t len, void *ud) {\n"                           \
    "    stats *s = ud;\n"                                                                         \
    "    (void)line;\n"                                                                            \
    "    s->bytes += len;\n"                                                                       \
    "    s->lines++;\n"                                                                            \
    "}\n\n"                                                                                        \
    "int ship_fd(int fd, size_t cap, stats *out) {\n"                                              \
    "    linebuf b;\n"                                                                             \
    "    if (linebuf_init(&b, cap) < 0)\n"                                                         \
    "        return -1;\n"                                                                         \
    "    for (;;) {\n"                                                                             \
    "        ssize_t r = linebuf_fill(&b, fd);\n"                                                  \
    "        if (r < 0) {\n"                                                                       \
    "            linebuf_free(&b);\n"                                                              \
    "            return -1;\n"                                                                     \
    "        }\n"                                                                                  \
    "        linebuf_drain(&b, count_line, out);\n"                                                \
    "        if (r == 0)\n"                                                                        \
    "            break;\n"                                                                         \
    "    }\n"                                                                                      \
    "    linebuf_free(&b);\n"                                                                      \
    "    return 0;\n"                                                                              \
    "}\n"

/* Two friends' messy shared notes for a trip to Portugal. */
#define DOC_PORTUGAL                                                                               \
    "Shared notes: Portugal trip, September (Jess and Omar)\n\n"                                   \
    "Basics\n"                                                                                     \
    "- Dates: fly into Lisbon Saturday Sept 14, arriving 11:30am. Fly home from Porto Sunday "     \
    "Sept 22, departure 4:10pm. So 8 nights.\n"                                                    \
    "- Flights already booked. Nothing else is booked yet.\n"                                      \
    "- Budget: we said around 2,400 euros total for both of us for everything except flights. "    \
    "Omar thinks that is tight, Jess thinks it is fine if we skip fancy dinners.\n"                \
    "- We both want at least one full \"do nothing\" beach or pool afternoon. Jess gets bad "      \
    "motion sickness on winding roads, so long bus rides on mountain roads are not great.\n\n"     \
    "Jess's notes\n"                                                                               \
    "- Lisbon: Alfama, the castle, the tile museum, a fado evening (I read the small places in "   \
    "Alfama are better than the big dinner shows but you have to book ahead or go early). Belem "  \
    "for the monastery and the custard tarts, go early because the queue is huge by 11.\n"         \
    "- Sintra as a day trip from Lisbon by train, about 40 minutes. Pena Palace needs a timed "    \
    "ticket. People online say do not try to do more than two palaces in a day. Quinta da "        \
    "Regaleira looks amazing.\n"                                                                   \
    "- I would love a cooking class, ideally seafood or pastries. Saw one in Lisbon for 75 euros " \
    "per person.\n"                                                                                \
    "- Porto: Ribeira riverside, port wine cellars in Gaia (tasting around 15 to 25 euros), the "  \
    "bookshop everyone talks about (I think you need a ticket, and it gets very crowded), Douro "  \
    "valley day trip.\n\n"                                                                         \
    "Omar's notes\n"                                                                               \
    "- Hotels: I looked at places in Lisbon around 120 to 160 euros a night for a double with "    \
    "breakfast in Baixa or Chiado. Porto is a little cheaper, maybe 100 to 130. A quinta (wine "   \
    "estate) in the Douro valley for one night would be amazing but they are 200 plus.\n"          \
    "- Train Lisbon to Porto is about 3 hours on the fast train, tickets around 30 to 45 euros "   \
    "each if booked early. Do it mid-trip.\n"                                                      \
    "- Douro: the organized day tours from Porto are about 90 to 110 euros each with lunch and "   \
    "tastings, but it is a lot of time in a minivan on curvy roads (Jess?). There is also a "      \
    "scenic train along the river from Porto to Pinhao, about 2.5 hours each way, and boat trips " \
    "from Pinhao.\n"                                                                               \
    "- I want to see a football match if Benfica or Porto play at home while we are there. Need "  \
    "to check the schedule.\n"                                                                     \
    "- Possible beach: Cascais is 40 minutes by train from Lisbon and easy. Or stay a night on "   \
    "the coast.\n"                                                                                 \
    "- Food: I want to try bifana, grilled sardines, bacalhau, francesinha in Porto. Budget "      \
    "maybe 60 to 80 a day for food for both of us if we mix cheap lunches and nicer dinners.\n\n"  \
    "Things we disagree on\n"                                                                      \
    "- Omar wants 5 nights in Lisbon and 3 in Porto. Jess wants 4 and 4 because she thinks Porto " \
    "will be more relaxed.\n"                                                                      \
    "- Jess wants to do a night in the Douro valley; Omar thinks it is too expensive and would "   \
    "rather do a day trip.\n"                                                                      \
    "- Omar wants to rent a car for a day; Jess would rather not because of the roads and "        \
    "parking.\n\n"                                                                                 \
    "Random practical stuff\n"                                                                     \
    "- September should still be warm, around 25 to 28 in the day, cooler evenings in Porto. "     \
    "Possibly one or two rainy days.\n"                                                            \
    "- Lisbon has lots of hills and cobblestones, so good shoes. The old trams are crowded, and "  \
    "there are pickpockets on tram 28.\n"                                                          \
    "- Most museums are closed on Mondays.\n"                                                      \
    "- We need to check whether the tile museum is open on the day we want.\n"                     \
    "- Jess needs a pharmacy at some point to refill a prescription (bring the paperwork).\n"      \
    "- Omar's cousin lives in Porto and invited us for dinner one evening, probably Friday the "   \
    "20th."

/* A quarterly business review for a small coffee roaster. */
#define DOC_COFFEE_QBR                                                                             \
    "Quarterly business review, Q3 - Hilltop Coffee Roasters\n"                                    \
    "Prepared by: finance and operations. For: founders and board.\n\n"                            \
    "1. Headline numbers (Q3 vs Q2)\n"                                                             \
    "- Total revenue: $412,000 (Q2: $398,000), up 3.5%.\n"                                         \
    "- Gross margin: 41.2% (Q2: 46.8%).\n"                                                         \
    "- Operating expenses: $171,000 (Q2: $152,000).\n"                                             \
    "- Operating profit: -$1,300 (Q2: $34,300).\n"                                                 \
    "- Cash at end of quarter: $188,000 (end of Q2: $231,000).\n\n"                                \
    "2. Revenue by channel\n"                                                                      \
    "- Wholesale to cafes and restaurants: $178,000 (Q2: $165,000). We added 9 new cafe accounts " \
    "and lost 2. Our two largest accounts, a local chain of 6 cafes and a hotel group, are 31% "   \
    "of wholesale revenue.\n"                                                                      \
    "- Online subscriptions: $121,000 (Q2: $133,000). Active subscribers went from 2,940 at the "  \
    "start of the quarter to 2,610 at the end. Monthly churn rose from 5.8% to 8.9%. New "         \
    "subscribers: 410 (Q2: 620).\n"                                                                \
    "- Online one-time orders: $54,000 (Q2: $49,000).\n"                                           \
    "- Our own cafe (Main Street): $59,000 (Q2: $51,000). Summer foot traffic was up and the new " \
    "cold brew menu sold well.\n\n"                                                                \
    "3. Costs\n"                                                                                   \
    "- Green coffee prices rose about 22% during the quarter because of lower harvests in Brazil " \
    "and higher freight costs. Most of our wholesale prices are fixed in annual contracts, so we " \
    "absorbed the increase there. Subscription prices were not changed.\n"                         \
    "- Shipping costs for subscriptions increased 14% after our carrier's mid-year rate change.\n" \
    "- We hired a second roaster in July ($14,000 this quarter including benefits) to prepare "    \
    "for holiday volume.\n"                                                                        \
    "- Paid social advertising: $22,000 (Q2: $16,000). Cost per new subscriber rose from $26 to "  \
    "$54.\n"                                                                                       \
    "- A one-time $6,500 repair on the roaster after the afterburner failed in August; we lost "   \
    "four production days.\n\n"                                                                    \
    "4. Customer feedback and operations\n"                                                        \
    "- Subscription cancellation survey (312 responses): \"too expensive\" 34%, \"too much "       \
    "coffee / skipped too often\" 27%, \"delivery late or damaged\" 18%, \"didn't like the "       \
    "coffee selection\" 12%, other 9%.\n"                                                          \
    "- Late deliveries rose in August after the roaster breakdown; 11% of subscription boxes "     \
    "shipped more than 3 days late (usually under 2%).\n"                                          \
    "- Wholesale customers are mostly happy; the cafe chain asked about a custom house blend and " \
    "a volume discount for next year.\n"                                                           \
    "- The Main Street cafe's average ticket went up from $7.40 to $8.10.\n\n"                     \
    "5. Notes from the team\n"                                                                     \
    "- Marketing believes the ad cost increase is due to higher competition for ad space in Q3 "   \
    "and a creative refresh that did not perform; a new set of ads launched in the last two "      \
    "weeks of September with better early results.\n"                                              \
    "- Operations suggests offering a \"pause\" option for subscriptions, which we do not have "   \
    "today; currently customers can only skip one delivery or cancel.\n"                           \
    "- Finance notes that at current burn, cash covers about 13 months of losses at the Q3 rate, " \
    "but Q4 is usually our strongest quarter because of holiday gift sales (last year Q4 revenue " \
    "was 38% higher than Q3).\n"                                                                   \
    "- The hotel group contract renews in January. They have asked for a quote.\n"                 \
    "- Two board members have suggested opening a second cafe next year. Estimated cost: "         \
    "$180,000 to $220,000."

/* Lecture notes on simple linear regression and least squares. */
#define DOC_REGRESSION                                                                             \
    "Lecture 7 notes: Simple linear regression and least squares\n"                                \
    "Intro to Statistical Methods\n\n"                                                             \
    "7.1 The setup\n"                                                                              \
    "We observe n pairs of numbers (x1, y1), (x2, y2), ..., (xn, yn). For example, x might be "    \
    "the number of hours a student studied and y their exam score. We want a straight line y = a " \
    "+ b*x that describes how y tends to change with x. The number a is the intercept (the "       \
    "predicted y when x = 0) and b is the slope (how much the predicted y changes when x "         \
    "increases by one unit).\n\n"                                                                  \
    "For any candidate line, the prediction for the i-th point is yhat_i = a + b*xi, and the "     \
    "residual is e_i = yi - yhat_i, the vertical distance between the point and the line. Points " \
    "above the line have positive residuals; points below have negative residuals.\n\n"            \
    "7.2 Why squares?\n"                                                                           \
    "We want residuals to be small overall. Simply adding them up does not work, because "         \
    "positive and negative residuals cancel: many bad lines have a residual sum of zero. We "      \
    "could add up absolute values, but the most common choice is the sum of squared "              \
    "residuals:\n\n"                                                                               \
    "S(a, b) = sum over i of (yi - a - b*xi)^2\n\n"                                                \
    "Squaring makes every term non-negative, punishes large misses more than small ones, and, "    \
    "importantly, gives a function that is smooth in a and b, so we can minimize it with "         \
    "calculus and get a formula.\n\n"                                                              \
    "7.3 Deriving the estimates\n"                                                                 \
    "Take partial derivatives of S with respect to a and b and set them to zero.\n\n"              \
    "dS/da = -2 * sum (yi - a - b*xi) = 0\n"                                                       \
    "dS/db = -2 * sum xi * (yi - a - b*xi) = 0\n\n"                                                \
    "Divide the first equation by -2n. Using xbar for the mean of the x values and ybar for the "  \
    "mean of the y values, we get ybar - a - b*xbar = 0, so\n\n"                                   \
    "a = ybar - b*xbar.\n\n"                                                                       \
    "This tells us the least squares line always passes through the point (xbar, ybar).\n\n"       \
    "Substitute a into the second equation and simplify. After some algebra:\n\n"                  \
    "b = sum (xi - xbar)(yi - ybar) / sum (xi - xbar)^2\n\n"                                       \
    "The numerator is n times the sample covariance of x and y (using the divide-by-n "            \
    "convention), and the denominator is n times the variance of x, so b = cov(x, y) / var(x). "   \
    "Another useful form is b = r * (sy / sx), where r is the correlation coefficient and sx, sy " \
    "are the standard deviations of x and y.\n\n"                                                  \
    "7.4 A small example\n"                                                                        \
    "Hours studied x: 1, 2, 4, 5, 8. Exam score y: 52, 60, 68, 75, 90.\n"                          \
    "xbar = 20 / 5 = 4. ybar = 345 / 5 = 69.\n"                                                    \
    "Deviations x - xbar: -3, -2, 0, 1, 4. Deviations y - ybar: -17, -9, -1, 6, 21.\n"             \
    "Products: 51, 18, 0, 6, 84. Sum = 159.\n"                                                     \
    "Squares of x deviations: 9, 4, 0, 1, 16. Sum = 30.\n"                                         \
    "b = 159 / 30 = 5.3. a = 69 - 5.3 * 4 = 47.8.\n"                                               \
    "Fitted line: yhat = 47.8 + 5.3x. Each extra hour of study is associated with about 5.3 more " \
    "points.\n\n"                                                                                  \
    "7.5 How good is the fit?\n"                                                                   \
    "The total variation in y is SST = sum (yi - ybar)^2. The variation left over after fitting "  \
    "the line is SSE = sum (yi - yhat_i)^2. The coefficient of determination is\n\n"               \
    "R^2 = 1 - SSE / SST.\n\n"                                                                     \
    "R^2 is between 0 and 1 and is the fraction of the variation in y that is explained by the "   \
    "line. For simple linear regression, R^2 equals the square of the correlation coefficient r. " \
    "An R^2 of 0.9 does not mean that 90% of the points lie on the line; it means the squared "    \
    "residuals are 90% smaller in total than the squared deviations from the mean.\n\n"            \
    "7.6 Cautions\n"                                                                               \
    "- Association is not causation. In our example, students who study more may also attend "     \
    "more lectures or sleep better.\n"                                                             \
    "- Extrapolation is risky. Our data covers 1 to 8 hours; predicting the score for 30 hours "   \
    "of study gives 206.8, which is impossible on a 100-point exam.\n"                             \
    "- Outliers can pull the line strongly, especially points with unusual x values (high "        \
    "leverage). Always plot the data.\n"                                                           \
    "- The least squares line for predicting y from x is not the same as the line for predicting " \
    "x from y, unless all points lie exactly on a line.\n"                                         \
    "- A curved pattern in the residual plot suggests a straight line is the wrong model.\n\n"     \
    "7.7 Next lecture\n"                                                                           \
    "We will treat a and b as estimates of unknown population parameters, compute their standard " \
    "errors, and build confidence intervals for the slope."

/* A company's remote work and equipment policy. */
#define DOC_REMOTE_POLICY                                                                          \
    "Northbeam Software - Remote Work and Equipment Policy\n"                                      \
    "Version 3.2. Owner: People Operations. Applies to: all full-time and part-time employees. "   \
    "Contractors are covered by their own agreements.\n\n"                                         \
    "1. Purpose\n"                                                                                 \
    "Northbeam is a remote-first company. This policy explains where you may work from, what "     \
    "equipment and support we provide, and what we expect so that remote work stays fair, secure " \
    "and legal for everyone.\n\n"                                                                  \
    "2. Where you can work\n"                                                                      \
    "2.1 Your home base. Every employee has a registered home base: the country and state or "     \
    "region where you normally live and work. Your employment contract, payroll, taxes and "       \
    "benefits are set up for that location. You must keep your home address up to date in the HR " \
    "system.\n"                                                                                    \
    "2.2 Working from another location in your home country. You may work from anywhere in your "  \
    "home base country without approval, as long as you can meet the core hours in section 3 and " \
    "have a secure, reliable internet connection.\n"                                               \
    "2.3 Working from another country. Working abroad can create tax and legal obligations for "   \
    "you and for Northbeam, even for short periods. You may work from another country for up to "  \
    "30 calendar days in any rolling 12-month period, provided that (a) you submit a request in "  \
    "the HR system at least 14 days in advance, (b) your manager approves it, and (c) the "        \
    "country is not on the restricted list maintained by the Legal team. Stays longer than 30 "    \
    "days require approval from People Operations and Legal, which is decided case by case and "   \
    "may be refused. Approval can take up to four weeks. A permanent move to another country is "  \
    "treated as a relocation and is only possible in countries where Northbeam can employ people " \
    "directly or through its employer of record provider.\n"                                       \
    "2.4 Security when traveling. Company laptops must not be left unattended in public places "   \
    "or vehicles. Do not use public computers for company work. When using public Wi-Fi you must " \
    "connect through the company VPN.\n\n"                                                         \
    "3. Working hours and availability\n"                                                          \
    "3.1 Teams agree on at least three hours of overlapping core hours each working day. Your "    \
    "manager will confirm your team's core hours.\n"                                               \
    "3.2 Keep your calendar and chat status current. If you will be unavailable for part of a "    \
    "working day, say so in your team channel.\n"                                                  \
    "3.3 Time zone changes. If you work from a different time zone for more than a week, "         \
    "including within your home country, tell your team in advance and check that you can still "  \
    "cover core hours.\n\n"                                                                        \
    "4. Equipment\n"                                                                               \
    "4.1 Company-provided equipment. Northbeam provides each employee with a laptop, a monitor, "  \
    "a keyboard and mouse, and a headset. This equipment remains company property and must be "    \
    "returned when you leave. Laptops are replaced every three years or earlier if they fail.\n"   \
    "4.2 Home office budget. New employees receive a one-time home office budget of 600 USD (or "  \
    "local equivalent) for items such as a desk, chair or lighting. Each year after that you "     \
    "receive a refresh budget of 200 USD. Unused budget does not carry over. Items bought with "   \
    "the budget belong to you.\n"                                                                  \
    "4.3 Internet and phone. Northbeam reimburses up to 50 USD per month toward home internet. "   \
    "Mobile phone costs are reimbursed only for roles that require being on call.\n"               \
    "4.4 Coworking. If you prefer to work outside home, you may claim up to 150 USD per month "    \
    "for a coworking space membership. This replaces, and cannot be combined with, the home "      \
    "internet reimbursement for the same month.\n"                                                 \
    "4.5 Lost, stolen or damaged equipment. Report loss or theft to IT within 24 hours through "   \
    "the help desk, so that the device can be locked and wiped remotely. Accidental damage is "    \
    "covered by the company. Repeated loss may be reviewed by your manager.\n\n"                   \
    "5. Expenses\n"                                                                                \
    "Submit all reimbursements through the expense tool within 60 days of purchase with an "       \
    "itemized receipt. Reimbursements are paid with the next payroll after approval.\n\n"          \
    "6. Health and safety\n"                                                                       \
    "You are responsible for setting up a safe workspace. People Operations offers a free "        \
    "virtual ergonomic assessment on request. Report any work-related injury to your manager and " \
    "People Operations as soon as possible.\n\n"                                                   \
    "7. In-person gatherings\n"                                                                    \
    "Each team meets in person at least once a year. Travel and accommodation for company "        \
    "gatherings are booked and paid for by Northbeam under the travel policy.\n\n"                 \
    "8. Exceptions and questions\n"                                                                \
    "Exceptions to this policy require written approval from People Operations. Questions can be " \
    "sent to the #ask-people channel or to the People Operations help desk."

/* A chapter draft of a middle-grade novel. */
#define DOC_STORY                                                                                  \
    "Chapter draft: \"The Lighthouse Keeper's Daughter\" (working title), chapter 3\n\n"           \
    "The supply boat was two days late, which on the island meant it might come tomorrow or "      \
    "might not come at all. Nell stood at the top of the stairs with the logbook under her arm "   \
    "and watched the grey line where the sea met the sky, as if looking hard enough could pull "   \
    "the boat over the horizon.\n\n"                                                               \
    "\"It won't come faster if you stare at it,\" her father said from the lamp room. He was "     \
    "polishing the great lens again, though he had polished it yesterday and the day before. He "  \
    "had been doing a lot of things twice since the letter arrived.\n\n"                           \
    "Nell did not answer. She went down the spiral stairs, one hundred and twelve of them, and "   \
    "she counted every one, because counting was better than thinking about the letter. The "      \
    "letter was from the Lighthouse Board, and it said that the light would be made automatic in " \
    "the spring, and that the keeper and his family would be \"relocated with appreciation for "   \
    "many years of faithful service.\" Nell had read it four times. Her father had read it once "  \
    "and then folded it very small and put it in the tin where he kept fishhooks.\n\n"             \
    "At the bottom of the tower the wind was worse. It came around the corner of the cottage and " \
    "pushed at her so hard that she had to lean into it, and the salt stung her eyes until they "  \
    "watered. She told herself it was the salt.\n\n"                                               \
    "Inside, the kitchen was warm and smelled of the last of the flour. There was enough for one " \
    "more loaf, maybe two if she made them small. There were four tins of sardines, a sack of "    \
    "potatoes that had started to grow eyes, and a jar of her mother's plum jam that none of "     \
    "them had opened since the winter her mother died. Nell took the jar down, looked at it, and " \
    "put it back.\n\n"                                                                             \
    "She opened the logbook on the table and wrote the date, and then: Wind north-northwest, "     \
    "strong. Sea rough. Visibility good. Supply boat not arrived. She looked at the last line "    \
    "for a long time. Then she wrote underneath, in smaller letters, Father polishing the lens "   \
    "again, and immediately scratched it out so hard that the pen went through the paper.\n\n"     \
    "Her brother Tomas came in from the shed with his hands black from the generator. He was "     \
    "fifteen, two years older than Nell, and since the letter he had been cheerful in a way that " \
    "made her want to throw things at him.\n\n"                                                    \
    "\"On the mainland there's a cinema,\" he said, washing his hands at the pump. \"And a "       \
    "school with a proper science room. Mr. Darrow says they have a telescope.\"\n\n"              \
    "\"We have a telescope,\" Nell said.\n\n"                                                      \
    "\"We have a spyglass that used to belong to a dead captain.\"\n\n"                            \
    "\"It works.\"\n\n"                                                                            \
    "Tomas dried his hands and looked at her properly for the first time in days. \"Nell. It's "   \
    "going to happen whether you like it or not.\"\n\n"                                            \
    "\"I know that,\" she said, and she did know it, which was the worst part. She knew it the "   \
    "way she knew the tide tables and the number of stairs: completely, without any way of "       \
    "arguing.\n\n"                                                                                 \
    "That night the storm came in properly. Nell lay awake and listened to the cottage creak and " \
    "the rain hit the window in handfuls, and above it all, every ten seconds, the long sweep of " \
    "the beam passing over the roof. She had fallen asleep to that beam every night of her life. " \
    "She tried to imagine a room where the dark stayed dark all night, and she could not do "      \
    "it.\n\n"                                                                                      \
    "Sometime after midnight she heard her father's footsteps on the tower stairs, going up, "     \
    "slow and steady. She counted them. At one hundred and twelve the footsteps stopped, and "     \
    "then there was only the wind, and the light going round, and round, and round.\n\n"           \
    "In the morning the supply boat was at the jetty, and the man who brought the flour also "     \
    "brought a stranger in a good coat who said he was an engineer from the Board and would need " \
    "to look at the lamp."

static const builtin_prompt long_prompts[] = {
    {"You are an executive assistant who writes clear, well-organized meeting minutes.",
     DOC_SYNC "\n\n"
     "Write meeting minutes for the transcript above: a two-sentence summary, the decisions that "
     "were made, and a table of action items with owner, task and due date. Flag any action item "
     "that has no clear due date."},
    {NULL,
     DOC_SYNC "\n\n"
     "I'm Maria. Write a status email to my VP of Engineering about the queue migration, based "
     "on this meeting. Keep it under 200 words, lead with the overall status (on track, at risk, "
     "or off track), and list the top two risks with what we are doing about each."},
    {NULL,
     DOC_INVENTORY_PY "\n\n"
     "Review the Python module above as a senior engineer. List every bug or risky pattern you "
     "find, ordered by severity, with the function it appears in, why it is a problem, and a "
     "concrete fix. Then say which two issues you would fix before the next deploy."},
    {"You are an experienced Python developer who writes clear, focused pytest tests.",
     DOC_INVENTORY_PY "\n\n"
     "Write pytest unit tests for parse_row, parse_feed and list_store_products in the module "
     "above. Use a fake session object instead of real HTTP. Include tests that would catch any "
     "pagination or parsing bugs you notice, and mark those with a comment."},
    {NULL,
     DOC_RATELIMIT "\n\n"
     "You are reviewing this design doc as a senior SRE. Give your review as: the three biggest "
     "risks, anything important that is missing, a recommendation for each open question, and "
     "whether you would approve it as is, approve with changes, or ask for a rewrite."},
    {NULL,
     DOC_RATELIMIT "\n\n"
     "Rewrite this design doc as a one-page summary for our product manager and the customer "
     "support team. Leave out implementation details like Lua and Redis. Explain what customers "
     "will notice and when, and what support should tell a customer who starts getting 429 "
     "errors."},
    {"You are a senior support agent for a scheduling software company. You are honest about what "
     "you do not know and never promise dates that engineering has not confirmed.",
     DOC_TICKET "\n\n"
     "Write the next reply to Rebecca in this ticket thread. Acknowledge what went wrong in our "
     "earlier replies, explain the cause in plain language, give the workaround, offer the "
     "credit, and tell her exactly what happens next."},
    {NULL,
     DOC_TICKET "\n\n"
     "Write an internal escalation for the integrations on-call engineer (Marco) based on this "
     "ticket thread. Include a one-line summary, customer impact, exact reproduction steps, what "
     "we already tried, the existing bug, and our specific asks in priority order. Keep it "
     "skimmable."},
    {NULL,
     DOC_BREAD "\n\n"
     "Based on the article above, write a quiz of eight multiple-choice questions with four "
     "options each, for adult beginners in a home baking class. Put an answer key at the end "
     "with a one-sentence explanation for each answer."},
    {NULL,
     DOC_BREAD "\n\n"
     "Rewrite the article above as a fun explainer of about 300 words for ten-year-olds who are "
     "baking bread at school for the first time. Keep the science correct, but use simple words "
     "and one or two comparisons they will understand."},
    {"You are a staff engineer experienced in distributed systems and incident analysis.",
     DOC_INCIDENT "\n\n"
     "Using the draft incident report above, explain the most likely root cause and the chain of "
     "contributing factors, step by step. Answer the three open items. Then propose follow-up "
     "actions, split into this week and longer term, and name the metrics or alerts that would "
     "have caught this sooner."},
    {NULL,
     DOC_INCIDENT "\n\n"
     "Write a public status page summary of this incident for our customers. No internal service "
     "names, pod names or blame. Say what happened, when, who was affected, what we did to fix "
     "it, and what we are changing so it does not happen again. About 200 words."},
    {NULL,
     DOC_RINGBUF_C "\n\n"
     "A new team member has to maintain the C file above. Explain how it works: the ring buffer "
     "layout, why the capacity must be a power of two, how head and tail are used, how lines "
     "that wrap around the end are handled, and what happens to very long lines. Use small "
     "plain-text diagrams where they help."},
    {"You are a careful C code reviewer focused on memory safety and undefined behavior.",
     DOC_RINGBUF_C "\n\n"
     "Find every bug in the code above, especially out-of-bounds writes, leaks, and cases where "
     "it can loop forever or lose data. For each one, describe a sequence of events that "
     "triggers it and give a patch."},
    {NULL,
     DOC_PORTUGAL "\n\n"
     "Using our shared notes above, make a day-by-day itinerary for the trip. Propose a "
     "compromise on each point we disagree on and explain it in one or two sentences. Mark what "
     "needs to be booked in advance, and keep the Monday museum closures and Jess's motion "
     "sickness in mind."},
    {NULL,
     DOC_PORTUGAL "\n\n"
     "From these notes, make a realistic budget for the 8 nights, broken down into "
     "accommodation, transport, food, activities and a buffer, and tell us whether 2,400 euros "
     "is enough. Then give a short packing list tailored to this trip."},
    {"You are a financial advisor to small food and beverage businesses. Be direct and use "
     "numbers.",
     DOC_COFFEE_QBR "\n\n"
     "Analyze this quarterly review. What are the three biggest problems, what caused each, and "
     "what should the founders do about them in Q4? Finish with a clear recommendation on the "
     "second cafe and your reasoning."},
    {NULL,
     DOC_COFFEE_QBR "\n\n"
     "Draft the quarterly update letter from the founders to our small group of investors, based "
     "on this review. Be honest about the weak quarter without sounding alarmed, explain the "
     "causes, and describe our plan for Q4. Around 300 words."},
    {NULL,
     DOC_REGRESSION "\n\n"
     "Based on these lecture notes, write five practice problems of increasing difficulty with "
     "full worked solutions. Include one problem that uses R^2, one about extrapolation, and one "
     "where the student must explain why a given line cannot be the least squares line."},
    {"You are a teaching assistant for an introductory statistics course.",
     DOC_REGRESSION "\n\n"
     "Turn these lecture notes into a one-page study sheet for the midterm: the key formulas, "
     "what each symbol means, a three-step recipe for computing the line by hand, and the five "
     "mistakes students make most often, each with a one-line correction."},
    {NULL,
     DOC_REMOTE_POLICY "\n\n"
     "Using only the policy above, answer this employee question: \"My partner got a three-month "
     "work assignment in Lisbon and I'd like to go with her and keep working remotely. What do I "
     "need to do, how long will it take, and is there anything that might stop it?\" Cite the "
     "relevant section numbers. If the policy does not answer something, say so."},
    {NULL,
     DOC_REMOTE_POLICY "\n\n"
     "Write an FAQ of eight questions and answers that new employees are likely to ask about "
     "this policy, especially about equipment, reimbursements and working while traveling. Keep "
     "each answer to two or three sentences and cite the section."},
    {"You are an experienced fiction editor for middle-grade and young adult novels.",
     DOC_STORY "\n\n"
     "Give me editorial feedback on this chapter draft: what works, what is unclear or slow, and "
     "how well Nell's voice and feelings come through. Suggest three specific line edits, and "
     "end with two questions the next chapter should answer."},
};

/* clang-format on */

const builtin_class builtin_classes[] = {
    {.name = "short",
     .prompt_min_tokens = 10,
     .prompt_max_tokens = 80,
     .output_min_tokens = 16,
     .output_max_tokens = 128,
     .prompts = short_prompts,
     .n_prompts = COUNT(short_prompts)},
    {.name = "medium",
     .prompt_min_tokens = 150,
     .prompt_max_tokens = 500,
     .output_min_tokens = 128,
     .output_max_tokens = 256,
     .prompts = medium_prompts,
     .n_prompts = COUNT(medium_prompts)},
    {.name = "long",
     .prompt_min_tokens = 800,
     .prompt_max_tokens = 1800,
     .output_min_tokens = 256,
     .output_max_tokens = 512,
     .prompts = long_prompts,
     .n_prompts = COUNT(long_prompts)},
};

const int builtin_n_classes = COUNT(builtin_classes);
